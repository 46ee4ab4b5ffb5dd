/** Where the MCP server answers (POST only; ../plugins/method-guard.ts refuses other methods). */
export const MCP_PATH = '/mcp';

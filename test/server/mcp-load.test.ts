// The MCP SDK (with zod and the apps extension) is loaded at the first request to /mcp, not at
// start (src/http/mcp/plugin.ts): a service whose clients only use REST never holds it. A real
// server process, with every module it imports recorded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServerProcess } from '../helpers/server-process.js';

const RECORD_LOADS = path.resolve('test/cli/record-loads.mjs');
const SDK = /@modelcontextprotocol|\/zod\//;

describe('the MCP SDK', () => {
  it('is loaded by the first call to /mcp, not by the start or a REST request; that call is answered', async () => {
    const loads = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-mcp-load-')), 'loads.txt');
    const server = await startServerProcess({ env: { RECORD_LOADS: loads }, nodeArgs: ['--import', RECORD_LOADS] });
    try {
      const auth = { authorization: `Bearer ${server.key}` };
      const rest = await fetch(`${server.baseUrl}/api/v1/citas?limit=1`, { headers: auth });
      expect(rest.status).toBe(200);
      const before = fs.readFileSync(loads, 'utf8');
      expect(before).toContain('/src/http/mcp/plugin.ts');
      expect(before).not.toMatch(SDK);

      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: 'POST',
        headers: { ...auth, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { result: { tools: { name: string }[] } };
      expect(body.result.tools.map((t) => t.name)).toContain('list_citas');
      expect(fs.readFileSync(loads, 'utf8')).toMatch(/@modelcontextprotocol\/sdk/);
    } finally {
      await server.kill();
    }
  }, 120_000);
});

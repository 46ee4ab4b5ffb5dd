// What connector directories (Claude's, ChatGPT's) ask of each MCP tool and of the server, on the
// tools as the server lists them (src/http/mcp/server.ts): a name of at most 64 characters, a human
// title, the read-only annotations, the server's icon, and a description that says what the tool
// returns without instructing the model (no "call again", "always", "use X"...), for a key with and
// without contact details. The same listing over HTTP: test/mcp/tools.test.ts.
import { describe, expect, it } from 'vitest';
import { ANNOTATIONS, SERVER_ICONS, TOOLS } from '../../src/http/mcp/server.js';

/** Words that tell a model what to do rather than what a tool gives. */
const INSTRUCTING =
  /\b(call (again|it|them|this|now|later|\w+_\w+|search|fetch)|use (it|this|\w+_\w+|search|fetch)|always|never call|must|should|make sure|remember|ignore|do not|don't|you|your|before answering|instead of)\b/i;
/** Verbs a description would open with when it gives an order (List..., Search..., Follow...). */
const IMPERATIVE_OPENING = /^(List|Search|Follow|Get|Find|Fetch|Call|Use|Look|Read|Show|Return)\b/;

describe('the MCP tools as listed', () => {
  it('each has a name within 64 characters, a human title and the read-only annotations', () => {
    expect(TOOLS.length).toBe(10);
    for (const tool of TOOLS) {
      expect(tool.name).toMatch(/^[a-z][a-z_]{0,63}$/);
      expect(tool.title.length, tool.name).toBeGreaterThan(10);
      expect(tool.title, tool.name).not.toMatch(/\.$|_/);
    }
    expect(ANNOTATIONS).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  });

  it('each description says what the tool returns and gives the model no order, with and without contact details', () => {
    for (const tool of TOOLS) {
      for (const contact of [true, false]) {
        const text = tool.describe({ tz: 'Europe/Madrid', contact });
        expect(text, tool.name).not.toMatch(INSTRUCTING);
        expect(text, tool.name).not.toMatch(IMPERATIVE_OPENING);
        expect(text.length, tool.name).toBeLessThan(1_200);
      }
    }
  });

  it('the server has an icon any host can show without fetching: an SVG data: URI', () => {
    expect(SERVER_ICONS).toEqual([
      { src: expect.stringMatching(/^data:image\/svg\+xml;base64,/), mimeType: 'image/svg+xml', sizes: ['any'] },
    ]);
    expect(Buffer.from(SERVER_ICONS[0]!.src.split(',')[1]!, 'base64').toString()).toMatch(
      /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/,
    );
  });
});

// What a service on SQLite does not load until it needs it: the MCP SDK (with zod and the apps
// extension) waits for the first request to /mcp (src/http/mcp/plugin.ts), pg for a PostgreSQL
// database (src/db/connect.ts), the CLI's progress bars for a command that shows one, and the ZIP
// writer for the first export (src/services/exports/zip.ts), and the dashboard's page handlers
// and views for its first page (src/admin/pages.ts), so a service whose clients only use REST
// never holds them. A real server process, with every module it imports recorded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServerProcess } from '../helpers/server-process.js';

const RECORD_LOADS = path.resolve('test/cli/record-loads.mjs');
const SDK = /@modelcontextprotocol|\/zod\//;
const PG = /\/node_modules\/pg\//;
const PROGRESS = /\/node_modules\/cli-progress\//;
const ZIP = /\/node_modules\/yazl\//;
const PAGES = /\/src\/admin\/(page-handlers|routes-|views\/)/;

describe('a service on SQLite', () => {
  it('loads the MCP SDK at the first call to /mcp and the dashboard pages at the first page, not at start or for a REST request, and never pg, the progress bars or the ZIP writer', async () => {
    const loads = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-lazy-')), 'loads.txt');
    const server = await startServerProcess({ env: { RECORD_LOADS: loads }, nodeArgs: ['--import', RECORD_LOADS] });
    try {
      const auth = { authorization: `Bearer ${server.key}` };
      const rest = await fetch(`${server.baseUrl}/api/v1/citas?limit=1`, { headers: auth });
      expect(rest.status).toBe(200);
      const before = fs.readFileSync(loads, 'utf8');
      expect(before).toContain('/src/http/mcp/plugin.js');
      expect(before).not.toMatch(SDK);
      expect(before).not.toMatch(PG);
      expect(before).not.toMatch(PROGRESS);
      expect(before).not.toMatch(ZIP);
      expect(before).toContain('/src/admin/index.js');
      expect(before).not.toMatch(PAGES);

      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: 'POST',
        headers: { ...auth, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { result: { tools: { name: string }[] } };
      expect(body.result.tools.map((t) => t.name)).toContain('list_citas');
      const after = fs.readFileSync(loads, 'utf8');
      expect(after).toMatch(/@modelcontextprotocol\/sdk/);
      expect(after).not.toMatch(PG);
      expect(after).not.toMatch(PAGES);

      const page = await fetch(`${server.baseUrl}/dashboard/sign-in`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('type="password"');
      const signIn = fs.readFileSync(loads, 'utf8');
      expect(signIn).toContain('/src/admin/page-handlers.js');
      expect(signIn).toContain('/src/admin/views/sign-in.js');
    } finally {
      await server.kill();
    }
  }, 120_000);
});

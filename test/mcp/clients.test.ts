// Clients nobody here wrote, run as docs/ai-assistants.md tells users to run them, with npx (the
// first run downloads them; npm keeps them in its cache), each in a directory and HOME of its own:
// - the MCP Inspector's command-line mode lists the tools of a listening server (finding nothing
//   unportable in their schemas) and calls one, with an API key in its --header (not a dependency of the project: it needs Node 22.19 or
//   later, and the project supports 22.15);
// - mcp-remote, the bridge Claude Desktop runs, started exactly as the page's Claude Desktop
//   configuration says (read from the page), driven over stdio as Claude Desktop drives it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { A } from '../helpers/fixtures.js';
import { listen } from './helpers.js';

const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of an npx run: this Node first, its own HOME, npm's own cache (downloads made once). */
function npxEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return {
    ...env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    HOME: home,
    npm_config_cache: process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

describe('MCP clients of other people against /mcp', () => {
  let t: TestApp;
  let url: URL;
  let home: string;
  beforeAll(async () => {
    t = await buildTestApp('sqlite', { env: { RATE_LIMIT_BURST: '1000000' } });
    url = await listen(t);
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'clinic-inspector-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  function inspector(args: string[], key = t.keyA): Promise<Run> {
    const npx = path.join(path.dirname(process.execPath), 'npx');
    const env = npxEnv(home);
    const argv = ['-y', INSPECTOR, '--cli', url.href, '--transport', 'http', '--header', `Authorization: Bearer ${key}`, ...args];
    return new Promise((resolve) => {
      execFile(fs.existsSync(npx) ? npx : 'npx', argv, { cwd: home, env, timeout: 170_000 }, (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      });
    });
  }

  it(
    'the MCP Inspector (CLI mode) lists the tools and calls one with an argument; a tool error and a bad key exit with their own codes',
    { timeout: 400_000 },
    async () => {
      const [major, minor] = process.versions.node.split('.').map(Number);
      expect(major! > 22 || (major === 22 && minor! >= 19), `${INSPECTOR} needs Node 22.19 or later; this is ${process.version}`).toBe(
        true,
      );

      // --strict: the Inspector's portability check of the tools' schemas, in full (it prints a
      // finding per schema node that some clients would drop or refuse, such as a list of types)
      const list = await inspector(['--method', 'tools/list', '--strict']);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stderr).not.toMatch(/Schema portability|(Warning|Error): tool "/);
      const tools = (JSON.parse(list.stdout) as { tools: { name: string; annotations: { readOnlyHint: boolean } }[] }).tools;
      expect(tools.map((x) => x.name)).toContain('list_citas');
      expect(tools).toHaveLength(10);
      expect(tools.every((x) => x.annotations.readOnlyHint)).toBe(true);

      // --tool-arg values are JSON: a string in quotes
      const got = await inspector(['--method', 'tools/call', '--tool-name', 'get_clienta', '--tool-arg', `id="${A.maria}"`]);
      expect(got.code, got.stderr).toBe(0);
      const result = JSON.parse(got.stdout) as { structuredContent: { id: string; nombre: string }; content: { text: string }[] };
      expect(result.structuredContent).toMatchObject({ id: A.maria, nombre: 'María José Núñez' });
      expect(result.content[0]!.text).toContain('María José Núñez');

      // a tool error (isError) exits 5; a refused key exits 3
      const bad = await inspector(['--method', 'tools/call', '--tool-name', 'list_citas', '--tool-arg', 'limit=0']);
      expect(bad.code).toBe(5);
      expect(bad.stdout + bad.stderr).toContain('Invalid argument limit');
      const refused = await inspector(['--method', 'tools/list'], `${t.keyA}x`);
      expect(refused.code).toBe(3);
    },
  );

  it(
    "mcp-remote, started as the page's Claude Desktop configuration says, lists the tools and calls one",
    { timeout: 400_000 },
    async () => {
      const page = fs.readFileSync(new URL('../../docs/ai-assistants.md', import.meta.url), 'utf8');
      const section = page.slice(page.indexOf('### Claude Desktop'), page.indexOf('### Cursor'));
      const block = /```json\n([\s\S]*?)```/.exec(section);
      expect(block, 'a ```json block under "### Claude Desktop"').not.toBeNull();
      const config = (
        JSON.parse(block![1]!) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> }
      ).mcpServers['clinic-api']!;
      // the page's server address and key, replaced by this server's and a real key
      const args = config.args.map((a) => (a === 'https://clinic-api.example.com/mcp' ? url.href : a));
      expect(args).toContain(url.href);
      const env = Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, v.replace('svc_...', t.keyA)]));
      const transport = new StdioClientTransport({
        command: config.command,
        args,
        env: { ...npxEnv(home), ...env },
        cwd: home,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-4000);
      });
      const client = new Client({ name: 'claude-desktop-like', version: '1.0.0' });
      try {
        await client.connect(transport);
        const { tools } = await client.listTools();
        expect(
          tools.map((x) => x.name),
          stderr,
        ).toContain('get_clinic');
        const res = (await client.callTool({ name: 'list_clientas', arguments: { q: 'maria' } })) as CallToolResult;
        expect(res.isError, stderr).toBeFalsy();
        expect((res.structuredContent as { clientas: { id: string }[] }).clientas.map((c) => c.id)).toContain(A.maria);
      } finally {
        await client.close();
      }
    },
  );
});

// A client nobody here wrote: the MCP Inspector's command-line mode (npx @modelcontextprotocol/
// inspector --cli, the tool docs/ai-assistants.md tells users to try a connection with) lists the
// tools of a listening server and calls one, with an API key in its --header. It is run as a user
// runs it, with npx (the first run downloads it; npm keeps it in its cache), in a directory and
// HOME of its own (it writes ~/.mcp-inspector/). Not a dependency of the project: it needs Node
// 22.19 or later, and the project supports 22.12.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

describe('the MCP Inspector (CLI mode) against /mcp', () => {
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
    const env = {
      ...process.env,
      // this Node first; npm's own cache (not the test's HOME), so the download is made once
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: home,
      npm_config_cache: process.env.npm_config_cache ?? path.join(os.homedir(), '.npm'),
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    };
    const argv = ['-y', INSPECTOR, '--cli', url.href, '--transport', 'http', '--header', `Authorization: Bearer ${key}`, ...args];
    return new Promise((resolve) => {
      execFile(fs.existsSync(npx) ? npx : 'npx', argv, { cwd: home, env, timeout: 170_000 }, (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      });
    });
  }

  it(
    'lists the tools and calls one with an argument; a tool error and a bad key are told apart by its exit code',
    { timeout: 400_000 },
    async () => {
      const [major, minor] = process.versions.node.split('.').map(Number);
      expect(major! > 22 || (major === 22 && minor! >= 19), `${INSPECTOR} needs Node 22.19 or later; this is ${process.version}`).toBe(
        true,
      );

      const list = await inspector(['--method', 'tools/list']);
      expect(list.code, list.stderr).toBe(0);
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
});

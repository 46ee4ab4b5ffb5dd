// The examples each operation's description shows (curl, JavaScript, Python), taken from the
// published document and run as a user would: real curl, node and python3 processes against a
// real server on 127.0.0.1, with the server and key in the environment. Each prints what the
// API answered, which must be data of the key's clinic; a single record's first takes an id from
// its list.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { call, ME_PATH, PATHS } from './helpers.js';

const run = promisify(execFile);
type Json = Record<string, any>;

/** The fenced blocks of a Markdown text, by language. */
function codeBlocks(markdown: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of markdown.matchAll(/```(\w+)\n([\s\S]*?)\n```/g)) out[m[1]!] = m[2]!;
  return out;
}

const COMMANDS: Record<string, (code: string) => [string, string[]]> = {
  sh: (code) => ['sh', ['-c', code]],
  js: (code) => [process.execPath, ['--input-type=module', '-e', code]],
  python: (code) => ['python3', ['-c', code]],
};

describe('the examples of each operation', () => {
  let t: TestApp;
  let doc: Json;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await buildTestApp('sqlite');
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    env = { PATH: process.env.PATH, CLINIC_API_URL: base, CLINIC_API_KEY: t.keyA };
    doc = (await call(t, '/api/v1/openapi.json', { key: null })).json();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([...PATHS, ME_PATH])('%s: curl, JavaScript and Python print what the API answers', async (path) => {
    const op = doc['paths'][path]['get'];
    const blocks = codeBlocks(op['description']);
    expect(Object.keys(blocks).sort()).toEqual(['js', 'python', 'sh']);
    // what each sample asks for, asked directly
    const url = /"\$CLINIC_API_URL([^"]+)"/.exec(blocks['sh']!)![1]!;
    const answer = (await call(t, url)).json();
    const expected = path === ME_PATH ? answer.clinica.nombre : String(answer.total);
    if (path === ME_PATH) expect(expected).toBe('Clínica Uno');
    else expect(answer.total, `${url} must return data`).toBeGreaterThan(0);
    await expectSamples(blocks, answer, expected);
  });

  // One record: the samples first list one (limit=1) and read it by its id.
  it.each(PATHS.map((p) => `${p}/{id}`))('%s: curl, JavaScript and Python list one record, then read it by its id', async (path) => {
    const blocks = codeBlocks(doc['paths'][path]['get']['description']);
    expect(Object.keys(blocks).sort()).toEqual(['js', 'python', 'sh']);
    const [listUrl, recordUrl] = [...blocks['sh']!.matchAll(/"\$CLINIC_API_URL([^"]+)"/g)].map((m) => m[1]!);
    expect(listUrl).toBe(`${path.replace('/{id}', '')}?limit=1`);
    expect(recordUrl).toBe(path.replace('{id}', '$ID'));
    const items = path.split('/')[3]!;
    const first = (await call(t, listUrl!)).json()[items][0];
    const answer = (await call(t, path.replace('{id}', first.id))).json();
    expect(answer).toEqual(first);
    const field = /console\.log\(body\.(\w+)\)/.exec(blocks['js']!)![1]!;
    await expectSamples(blocks, answer, String(answer[field]));
  });

  /** curl prints the answer itself; JavaScript and Python print `expected`. */
  async function expectSamples(blocks: Record<string, string>, answer: unknown, expected: string) {
    const curl = await run(...COMMANDS['sh']!(blocks['sh']!), { env, timeout: 20_000 });
    expect(JSON.parse(curl.stdout)).toEqual(answer);
    for (const lang of ['js', 'python']) {
      const [cmd, args] = COMMANDS[lang]!(blocks[lang]!);
      const { stdout } = await run(cmd, args, { env: { ...env, PYTHONIOENCODING: 'utf-8' }, timeout: 20_000 });
      expect(stdout.trim(), lang).toBe(expected);
    }
  }

  it.each([ME_PATH, '/api/v1/citas/{id}'])('the JavaScript and Python samples of %s fail loudly on an error answer', async (path) => {
    const blocks = codeBlocks(doc['paths'][path]['get']['description']);
    const bad = { ...env, CLINIC_API_KEY: 'svc_not_a_real_key_0000000000' };
    const [jsCmd, jsArgs] = COMMANDS['js']!(blocks['js']!);
    await expect(run(jsCmd, jsArgs, { env: bad, timeout: 20_000 })).rejects.toMatchObject({
      stderr: expect.stringContaining('invalid_api_key'),
    });
    const [pyCmd, pyArgs] = COMMANDS['python']!(blocks['python']!);
    await expect(run(pyCmd, pyArgs, { env: bad, timeout: 20_000 })).rejects.toMatchObject({ stderr: expect.stringContaining('401') });
  });
});

// The agenda view for hosts that draw MCP Apps (docs/ai-assistants.md, "The agenda view"):
// list_citas names the ui:// document in its metadata, resources/read gives that one
// self-contained HTML document, and a host without the extension gets exactly what it got
// before: the same tools, the same text and structured result (the REST answer). The view in a
// browser, driven by a host: test/browser/mcp-agenda.test.ts.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ok } from '../http/helpers.js';
import { connect, listen } from './helpers.js';

const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';

/** A client that says it draws MCP Apps, as Claude, ChatGPT or VS Code do at initialize. */
async function connectWithApps(url: URL, key: string): Promise<Client> {
  const client = new Client(
    { name: 'apps-host', version: '1.0.0' },
    { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } as Record<string, unknown> },
  );
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

describe('the agenda view of list_citas (MCP Apps)', () => {
  let t: TestApp;
  let url: URL;
  let plain: Client;
  let apps: Client;
  beforeAll(async () => {
    t = await buildTestApp('sqlite', { env: { RATE_LIMIT_BURST: '1000000' } });
    url = await listen(t);
    plain = await connect(url, t.keyA);
    apps = await connectWithApps(url, t.keyA);
  });
  afterAll(async () => {
    await plain.close();
    await apps.close();
    await t.close();
  });

  it('declares the extension and resources; list_citas alone names the view', async () => {
    expect(apps.getServerCapabilities()).toMatchObject({ resources: {}, extensions: { [UI]: {} } });
    const { tools } = await apps.listTools();
    const withUi = tools.filter((x) => x._meta !== undefined);
    expect(withUi.map((x) => x.name)).toEqual(['list_citas']);
    expect(withUi[0]!._meta).toEqual({ ui: { resourceUri: 'ui://clinic-api/agenda' }, 'ui/resourceUri': 'ui://clinic-api/agenda' });
  });

  it('resources/read gives one self-contained HTML document, the same for every key', async () => {
    const { resources } = await apps.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: 'ui://clinic-api/agenda', mimeType: MIME, name: 'agenda' })]);
    const read = await apps.readResource({ uri: 'ui://clinic-api/agenda' });
    expect(read.contents).toHaveLength(1);
    const content = read.contents[0] as { uri: string; mimeType: string; text: string };
    expect(content).toMatchObject({ uri: 'ui://clinic-api/agenda', mimeType: MIME });
    const html = content.text;
    expect(html).toMatch(/^<!doctype html><html lang="en"><head><meta charset="utf-8">/);
    expect(html.endsWith('</script></body></html>')).toBe(true);
    // nothing loaded from anywhere: one inline style and one inline script, no element with an
    // address (the script makes none either: the browser test watches its requests)
    const markup = html.slice(0, html.indexOf('<script>')) + html.slice(html.lastIndexOf('</script>'));
    const style = markup.slice(markup.indexOf('<style>'), markup.indexOf('</style>'));
    const found = (re: RegExp, text: string) => re.exec(text)?.[0] ?? null;
    expect(found(/<(link|img|iframe|object|embed|base|script\b[^>]*\bsrc)\b|\b(src|href)=/i, markup)).toBeNull();
    expect(found(/url\(|@import/i, style)).toBeNull();
    expect(html.match(/<script\b/g)).toHaveLength(1);
    expect(html.match(/<\/script/gi)).toHaveLength(1);
    // built once, small enough to send on every connection
    expect(html.length).toBeLessThan(250_000);
    const other = await connect(url, t.keyB);
    try {
      expect(await other.readResource({ uri: 'ui://clinic-api/agenda' })).toEqual(read);
    } finally {
      await other.close();
    }
  });

  it('an unknown resource is MCP’s “resource not found” (-32002), naming the one there is', async () => {
    const err = await apps.readResource({ uri: 'ui://clinic-api/other' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32002);
    expect((err as McpError).message).toContain('ui://clinic-api/agenda');
  });

  it('a key that may not list citas is not offered the view', async () => {
    const key = (
      await t.keys.create({ clinicId: t.clinicA.id, name: 'clients only', expiresAt: null, createdBy: null, scopes: ['clientas:read'] })
    ).key;
    const client = await connectWithApps(url, key);
    try {
      expect((await client.listResources()).resources).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('a host without the extension gets the same tools and the same result, text and structured (the REST answer)', async () => {
    expect((await plain.listTools()).tools).toEqual((await apps.listTools()).tools);
    const args = { desde: '2026-03-23', hasta: '2026-03-29' };
    const a = (await plain.callTool({ name: 'list_citas', arguments: args })) as CallToolResult;
    const b = (await apps.callTool({ name: 'list_citas', arguments: args })) as CallToolResult;
    expect(a).toEqual(b);
    expect(Object.keys(a).sort()).toEqual(['content', 'structuredContent']);
    expect(a.content).toEqual([
      { type: 'text', text: expect.stringContaining('appointments (citas) from Mon 2026-03-23 to Sun 2026-03-29') },
    ]);
    expect(a.structuredContent).toEqual(await ok(t, '/api/v1/citas?desde=2026-03-23&hasta=2026-03-29'));
  });
});

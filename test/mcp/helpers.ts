// The MCP tests' client: the official SDK's own Client over real HTTP (its Streamable HTTP
// transport) against the real app listening on 127.0.0.1, as an assistant connects to it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { TestApp } from '../helpers/app.js';

/** Listens on a free port of 127.0.0.1; returns the /mcp URL. */
export async function listenApp(app: FastifyInstance): Promise<URL> {
  return new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
}

/** The test app listening (listenApp); returns the /mcp URL. */
export function listen(t: TestApp): Promise<URL> {
  return listenApp(t.app);
}

/** A connected client (initialize done) sending `key` as Bearer on every request. */
export async function connect(url: URL, key: string): Promise<Client> {
  const client = new Client({ name: 'clinic-api-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** A tool call that must succeed: its structured result, and its text. */
export async function callOk(client: Client, name: string, args: Record<string, unknown> = {}) {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError, `${name}: ${JSON.stringify(res.content)}`).toBeFalsy();
  expect(res.content).toHaveLength(1);
  expect(res.content[0]!.type).toBe('text');
  return { structured: res.structuredContent as Record<string, any>, text: (res.content[0] as { text: string }).text };
}

/** A tool call that must be a tool error (isError: true): its text. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError, `${name}(${JSON.stringify(args)}) should fail: ${JSON.stringify(res.content)}`).toBe(true);
  expect(res.structuredContent).toBeUndefined();
  return (res.content[0] as { text: string }).text;
}

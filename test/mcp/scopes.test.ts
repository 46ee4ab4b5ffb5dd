// The key's scopes on /mcp (docs/ai-assistants.md, "Which key to give an assistant"): tools/list
// shows only the tools the key's scopes allow; a tool outside them called anyway is an HTTP 403
// insufficient_scope whose challenge names the scope it needs (as REST's), never data; an argument
// reaching outside them (fetch of a record kind, the feed's tipo) is a tool error naming the scope; a key without
// contacto:read gets the contact fields null in every tool's result, exactly as REST gives them
// to that key, and search never matches phone digits for it. The SDK's client over real HTTP,
// both databases.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/domain/scopes.js';
import { localDate } from '../../src/time.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { A, FIXTURE_NOW_MS } from '../helpers/fixtures.js';
import { citaA, llamadaA, ok, tick } from '../http/helpers.js';
import { callError, callOk, connect, listen } from './helpers.js';

const ALL_TOOLS = [
  'get_clinic',
  'list_citas',
  'get_cita',
  'list_clientas',
  'get_clienta',
  'list_llamadas',
  'get_llamada',
  'list_eventos',
  'search',
  'fetch',
];
/** Each tool's arguments for a call that succeeds with every scope, and the scope it needs. */
const CALLS: { tool: string; args: Record<string, unknown>; scope: Scope | null }[] = [
  { tool: 'get_clinic', args: {}, scope: null },
  { tool: 'list_citas', args: { desde: '2026-01-01', hasta: '2026-12-31', limit: 500 }, scope: 'citas:read' },
  { tool: 'get_cita', args: { id: citaA(2) }, scope: 'citas:read' },
  { tool: 'list_clientas', args: { limit: 500 }, scope: 'clientas:read' },
  { tool: 'get_clienta', args: { id: A.maria }, scope: 'clientas:read' },
  { tool: 'list_llamadas', args: { desde: '2026-01-01', limit: 500 }, scope: 'llamadas:read' },
  { tool: 'get_llamada', args: { id: llamadaA(1) }, scope: 'llamadas:read' },
  { tool: 'list_eventos', args: { limit: 500 }, scope: 'eventos:read' },
  { tool: 'search', args: { query: 'maria' }, scope: 'clientas:read' },
];
const CONTACT = ['telefono', 'email', 'notas', 'telefono_caller'];
const REST: Record<string, (args: Record<string, unknown>) => string> = {
  get_clinic: () => '/api/v1/me',
  list_citas: (a) => `/api/v1/citas?${qs(a)}`,
  get_cita: (a) => `/api/v1/citas/${String(a.id)}`,
  list_clientas: (a) => `/api/v1/clientas?${qs(a)}`,
  get_clienta: (a) => `/api/v1/clientas/${String(a.id)}`,
  list_llamadas: (a) => `/api/v1/llamadas?${qs(a)}`,
  get_llamada: (a) => `/api/v1/llamadas/${String(a.id)}`,
  list_eventos: (a) => `/api/v1/eventos?${qs(a)}`,
};
const qs = (args: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** Every contact field anywhere in `value` (records, lists, the feed's datos): [path, value]. */
function contactFields(value: unknown, path = '$'): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => contactFields(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(CONTACT.includes(k) ? [[`${path}.${k}`, v] as [string, unknown]] : []),
    ...contactFields(v, `${path}.${k}`),
  ]);
}

describe.each(dialects())('MCP and the key’s scopes on %s', (dialect) => {
  let t: TestApp;
  let url: URL;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];
  const client = async (name: string, scopes: Scope[]) => {
    keys[name] = (await t.keys.create({ clinicId: t.clinicA.id, name, expiresAt: null, createdBy: null, scopes })).key;
    const c = await connect(url, keys[name]);
    clients.push(c);
    return c;
  };
  let citasOnly: Client;
  let feedOnly: Client;
  let contactOnly: Client;
  let noContact: Client;
  let withContact: Client;
  beforeAll(async () => {
    t = await buildTestApp(dialect, { env: { RATE_LIMIT_BURST: '1000000' } });
    url = await listen(t);
    citasOnly = await client('citasOnly', ['citas:read']);
    feedOnly = await client('feedOnly', ['eventos:read']);
    contactOnly = await client('contactOnly', ['contacto:read']);
    noContact = await client('noContact', ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read']);
    withContact = await client('withContact', ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read']);
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await t.close();
  });
  beforeEach(() => {
    t.clock.now = Math.max(t.clock.now, FIXTURE_NOW_MS);
    tick(t);
  });

  it('tools/list shows only the tools the key’s scopes allow', async () => {
    const names = async (c: Client) => (await c.listTools()).tools.map((x) => x.name);
    expect(await names(withContact)).toEqual(ALL_TOOLS);
    expect(await names(noContact)).toEqual(ALL_TOOLS);
    expect(await names(citasOnly)).toEqual(['get_clinic', 'list_citas', 'get_cita', 'fetch']);
    expect(await names(feedOnly)).toEqual(['get_clinic', 'list_eventos']);
    expect(await names(contactOnly)).toEqual(['get_clinic']);
    const clientasOnly = await client('clientasOnly', ['clientas:read']);
    expect(await names(clientasOnly)).toEqual(['get_clinic', 'list_clientas', 'get_clienta', 'search', 'fetch']);
    const llamadasOnly = await client('llamadasOnly', ['llamadas:read', 'contacto:read']);
    expect(await names(llamadasOnly)).toEqual(['get_clinic', 'list_llamadas', 'get_llamada', 'fetch']);
    // the descriptions say what a key without contacto:read gets: no contact details, no search by phone
    const described = async (c: Client) => new Map((await c.listTools()).tools.map((x) => [x.name, x.description ?? '']));
    const full = await described(withContact);
    const blind = await described(noContact);
    for (const name of ALL_TOOLS.filter((n) => n !== 'get_clinic')) {
      expect(full.get(name), name).not.toContain('does not see contact details');
      expect(blind.get(name), name).toContain('does not see contact details');
    }
    expect(blind.get('get_clinic')).toBe(full.get('get_clinic'));
    for (const name of ['list_clientas', 'search']) {
      expect(full.get(name), name).toMatch(/digits of (the|their) phone/);
      expect(blind.get(name), name).not.toMatch(/digits of (the|their) phone/);
    }
    // get_clinic's text names the tools this key may use, and the key's scopes are in its result as in /me
    const clinic = await callOk(feedOnly, 'get_clinic');
    expect(clinic.structured).toEqual(await ok(t, '/api/v1/me', { key: keys.feedOnly }));
    expect(clinic.structured.api_key.scopes).toEqual(['eventos:read']);
    expect(clinic.text).toContain('list_eventos');
    expect(clinic.text).not.toContain('list_citas');
  });

  /** A tools/call over plain HTTP with `key` (the SDK's client turns a 403 into an exception). */
  const rawCall = (key: string, name: string, args: Record<string, unknown>) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });

  it('a tool outside the key’s scopes, called anyway, is an HTTP 403 insufficient_scope with the challenge naming the scope', async () => {
    for (const { tool, args, scope } of CALLS) {
      if (scope === null) continue;
      const res = await rawCall(keys.contactOnly!, tool, args);
      expect(res.status, tool).toBe(403);
      expect(res.headers.get('www-authenticate'), tool).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
      const body = (await res.json()) as { error: { code: string; scope: string; message: string } };
      expect(body.error).toMatchObject({ code: 'insufficient_scope', scope });
      expect(body.error.message, tool).toContain(tool);
      expect(body.error.message, tool).toContain('Settings > API');
      // nothing of the data: the same refusal for a record that exists and one that does not
      if ('id' in args) {
        const other = await rawCall(keys.contactOnly!, tool, { id: '0a000009-0000-4000-8000-000000000999' });
        expect(((await other.json()) as typeof body).error.message).toBe(body.error.message);
      }
    }
    // fetch reads any kind of record: any of the three scopes would do, and the challenge names them all
    const fetched = await rawCall(keys.contactOnly!, 'fetch', { id: `cita:${citaA(2)}` });
    expect(fetched.status).toBe(403);
    expect(fetched.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="citas:read clientas:read llamadas:read"',
    );
    expect(((await fetched.json()) as { error: { message: string } }).error.message).toContain(
      'citas:read or clientas:read or llamadas:read',
    );
    // The SDK's client (no OAuth) gets the 403 as an error, not a result.
    await expect(contactOnly.callTool({ name: 'list_citas', arguments: {} })).rejects.toMatchObject({ code: 403 });
    // fetch is listed for any key that reads one kind of record; a kind outside its scopes is refused by name
    const cita = `cita:${citaA(2)}`;
    expect((await callOk(citasOnly, 'fetch', { id: cita })).structured.id).toBe(cita);
    expect(await callError(citasOnly, 'fetch', { id: `clienta:${A.maria}` })).toContain('scope clientas:read');
    expect(await callError(citasOnly, 'fetch', { id: `llamada:${llamadaA(1)}` })).toContain('scope llamadas:read');
    // a bare UUID is looked up only in the kinds the key may read: a clienta is "not found" for citasOnly
    expect(await callError(citasOnly, 'fetch', { id: A.maria })).toMatch(/^No record with id/);
    // the feed: a tipo of a collection the key may not read names the scope it needs, as REST's 403 does
    expect(await callError(feedOnly, 'list_eventos', { tipo: 'cita.creada' })).toContain('citas:read');
    // the refusals are in the keys' usage under insufficient_scope: the 403s, and the tool errors (HTTP 200: a tool result)
    await t.app.usage.flush();
    const day = localDate(Math.floor(t.clock.now / 1000), 'Europe/Madrid');
    const errorsOf = async (name: string) => {
      const keyId = (await t.keys.verify(keys[name]!))!.keyId;
      return (await t.app.usage.summary(t.clinicA.id, [day])).get(keyId)?.lastErrors.map((e) => [e.status, e.code]);
    };
    expect(await errorsOf('contactOnly')).toEqual([[403, 'insufficient_scope']]);
    expect(await errorsOf('feedOnly')).toEqual([[200, 'insufficient_scope']]);
  });

  it('without contacto:read every tool’s result is REST’s for that key: contact fields null, in the text too', async () => {
    for (const { tool, args } of CALLS) {
      if (tool === 'search') continue;
      const { structured, text } = await callOk(noContact, tool, args);
      expect(structured, tool).toEqual(await ok(t, REST[tool]!(args), { key: keys.noContact }));
      const fields = contactFields(structured);
      if (tool !== 'get_clinic') expect(fields.length, tool).toBeGreaterThan(0);
      expect(
        fields.filter(([, v]) => v !== null),
        tool,
      ).toEqual([]);
      // the same call with contacto:read gives them (REST's answer for that key)
      const full = await callOk(withContact, tool, args);
      expect(full.structured, tool).toEqual(await ok(t, REST[tool]!(args), { key: keys.withContact }));
      const phones = contactFields(full.structured).filter(([k, v]) => /telefono/.test(k) && typeof v === 'string') as [string, string][];
      if (tool !== 'get_clinic' && tool !== 'list_eventos') expect(phones.length, tool).toBeGreaterThan(0);
      for (const [, phone] of phones) expect(text, tool).not.toContain(phone);
    }
    // search and fetch: no phone digits matched, no contact details in what fetch writes out
    const maria = await ok(t, `/api/v1/clientas/${A.maria}`, { key: keys.withContact });
    const digits = (maria.telefono as string).replace(/\D/g, '').slice(-6);
    expect((await callOk(withContact, 'search', { query: digits })).structured.results.map((r: { id: string }) => r.id)).toContain(
      `clienta:${A.maria}`,
    );
    expect((await callOk(noContact, 'search', { query: digits })).structured.results).toEqual([]);
    expect((await callOk(noContact, 'search', { query: 'maria' })).structured.results.map((r: { id: string }) => r.id)).toContain(
      `clienta:${A.maria}`,
    );
    const fetched = await callOk(noContact, 'fetch', { id: `clienta:${A.maria}` });
    expect(fetched.structured.text).toContain(maria.nombre);
    expect(fetched.structured.text).not.toContain(maria.telefono);
    expect(fetched.structured.text).not.toContain(maria.email);
    expect((await callOk(withContact, 'fetch', { id: `clienta:${A.maria}` })).structured.text).toContain(maria.telefono);
  });
});

// SSRF protection (docs/webhooks.md, "Where webhooks may go"): each refusal, at creation and at
// delivery; the connection goes to the address that was checked (no second DNS look-up to be
// rebound); redirects are not followed; a response body is read only up to 4 KiB.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { addressClass, checkUrl, vetHost, type Resolver } from '../../src/services/webhooks/destination.js';
import { WebhookService } from '../../src/services/webhooks/endpoints.js';
import { RESPONSE_CAP, sendWebhook } from '../../src/services/webhooks/send.js';
import { buildTestApp, TEST_PEPPER, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('addressClass: only global unicast is public', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['169.254.0.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['fc00::1', 'uniqueLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    // IPv6 forms that carry an IPv4 address: mapped (classed as the IPv4), 6to4, NAT64, Teredo.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['2002:7f00:1::', '6to4'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2001::1', 'teredo'],
    ['not-an-ip', 'invalid'],
  ])('%s is %s', (address, cls) => {
    expect(addressClass(address)).toBe(cls);
  });
});

describe('checkUrl and vetHost refuse, each with its reason', () => {
  const refusal = async (f: () => unknown) => {
    try {
      await f();
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).details.field).toBe('url');
      return `${(err as { refusal: string }).refusal}: ${(err as Error).message}`;
    }
    throw new Error('not refused');
  };
  const vet = (url: string, resolve?: Resolver) => vetHost(checkUrl(url, false), false, resolve);

  it('plain http, other schemes, user info, not a URL, too long', async () => {
    expect(await refusal(() => checkUrl('http://example.com/hook', false))).toMatch(
      /^not_https: url must start with https:\/\/ \(got http:\/\/\).*; for a receiver on this machine or a private network .*set WEBHOOK_ALLOW_PRIVATE=true in the environment of the server and of the clinic-api command/,
    );
    expect(await refusal(() => checkUrl('ftp://example.com/hook', false))).toMatch(/^not_https/);
    expect(await refusal(() => checkUrl('ftp://example.com/hook', true))).toBe(
      'not_http: url must start with https:// or http:// (got ftp://)',
    );
    expect(await refusal(() => checkUrl('https://user:pw@example.com/hook', false))).toMatch(/^userinfo: .*user name or password/);
    expect(await refusal(() => checkUrl('example.com/hook', false))).toMatch(/^invalid_url: url is not a valid URL/);
    expect(await refusal(() => checkUrl(`https://example.com/${'a'.repeat(2000)}`, false))).toMatch(/^invalid_url: .*at most 2000/);
    // WEBHOOK_ALLOW_PRIVATE=true also allows http:// (tests, private networks), never user info.
    expect(checkUrl('http://10.0.0.5:8080/hook#frag', true).href).toBe('http://10.0.0.5:8080/hook');
    expect(await refusal(() => checkUrl('http://u:p@10.0.0.5/hook', true))).toMatch(/^userinfo/);
  });

  it('loopback, private, link-local, metadata, CGNAT, unique-local, mapped: as literals and as names', async () => {
    for (const url of [
      'https://127.0.0.1/h',
      'https://[::1]/h',
      'https://10.0.0.1/h',
      'https://192.168.0.10/h',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00:ec2::254]/h',
      'https://100.100.100.200/h',
      'https://[::ffff:127.0.0.1]/h',
      'https://0.0.0.0/h',
      'https://[fe80::1]/h',
      // Other spellings of 127.0.0.1, which URL parsing normalises before the check.
      'https://0x7f000001/h',
      'https://2130706433/h',
      'https://127.1/h',
      'https://0177.0.0.1/h',
    ]) {
      expect(await refusal(() => vet(url))).toMatch(/^private_address: .*not a public address.*set WEBHOOK_ALLOW_PRIVATE=true/);
    }
    // A name resolving to loopback (the system's resolver).
    expect(await refusal(() => vet('https://localhost/h'))).toMatch(
      /^private_address: url's host localhost resolves to (127\.0\.0\.1|::1) \(loopback\)/,
    );
    // One private address among public ones is enough to refuse.
    const mixed: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    expect(await refusal(() => vet('https://mixed.example/h', mixed))).toMatch(/resolves to 10\.0\.0\.7 \(private\)/);
    expect(await refusal(() => vet('https://nothing.invalid/h'))).toMatch(/^unresolvable/);
    // Public is fine, and WEBHOOK_ALLOW_PRIVATE lifts the address rule.
    const pub: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];
    expect(await vet('https://public.example/h', pub)).toEqual({ address: '93.184.216.34', family: 4 });
    expect(await vetHost(checkUrl('https://localhost/h', true), true)).toHaveProperty('address');
  });
});

describe('at creation and at delivery', () => {
  let t: TestApp;
  let r: Receiver;
  beforeAll(async () => {
    t = await buildTestApp('sqlite', { seed: false });
    r = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await r.close();
  });
  const send = (url: string, allowPrivate: boolean, resolve?: Resolver, timeoutMs = 2_000) =>
    sendWebhook(url, SECRET, 'msg_1', '{"id":"msg_1"}', { allowPrivate, timeoutMs, resolve });

  it('creating an endpoint on a private destination is refused with a clear message; allowed with WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = new WebhookService(t.database, {
      pepper: TEST_PEPPER,
      apiPlans: t.config.apiPlans,
      allowPrivate: false,
      timeoutMs: 1000,
    });
    await expect(strict.create({ clinicId: t.clinicA.id, url: r.url, eventTypes: null, createdBy: null })).rejects.toThrow(
      /must start with https:\/\//,
    );
    await expect(
      strict.create({ clinicId: t.clinicA.id, url: `https://127.0.0.1:${r.port}/hook`, eventTypes: null, createdBy: null }),
    ).rejects.toThrow(/resolves to 127\.0\.0\.1 \(loopback\), which is not a public address/);
    expect(await strict.list(t.clinicA.id)).toHaveLength(0);
    const open = new WebhookService(t.database, { pepper: TEST_PEPPER, apiPlans: t.config.apiPlans, allowPrivate: true, timeoutMs: 1000 });
    expect((await open.create({ clinicId: t.clinicA.id, url: r.url, eventTypes: null, createdBy: null })).endpoint.url).toBe(r.url);
  });

  it('a destination allowed once is checked again at delivery: refused, nothing sent', async () => {
    const before = r.received.length;
    expect(await send(r.url.replace('http:', 'https:'), false)).toMatchObject({ ok: false, error: 'refused_address', statusCode: null });
    const toLoopbackName: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    expect(await send(`https://hooks.example:${r.port}/hook`, false, toLoopbackName)).toMatchObject({
      ok: false,
      error: 'refused_address',
    });
    expect(r.received.length).toBe(before);
  });

  it('connects to the address that was checked, not to a second look-up of the name', async () => {
    // "rebind.invalid" has no address in any DNS; only the vetted answer can reach the receiver.
    let lookups = 0;
    const once: Resolver = async () => {
      lookups++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const a = await send(`http://rebind.invalid:${r.port}/hook`, true, once);
    expect(a).toMatchObject({ ok: true, statusCode: 200, error: null });
    expect(lookups).toBe(1);
    expect(r.received.at(-1)!.headers.host).toBe(`rebind.invalid:${r.port}`);
  });

  it('does not follow redirects: a 3xx is a failed attempt and the target gets nothing', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver('/hook', () => ({ status: 307, headers: { location: target.url } }));
    try {
      expect(await send(redirecting.url, true)).toMatchObject({ ok: false, statusCode: 307, error: 'redirect' });
      expect(target.received).toHaveLength(0);
    } finally {
      await target.close();
      await redirecting.close();
    }
  });

  it('reads at most 4 KiB of an answer: an endless body still ends the attempt, as its status says', async () => {
    let written = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1024, 'x');
      const timer = setInterval(() => {
        written += chunk.length;
        res.write(chunk);
      }, 1);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    try {
      const a = await send(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, true, undefined, 3_000);
      expect(a).toMatchObject({ ok: true, statusCode: 200, error: null });
      expect(written).toBeGreaterThanOrEqual(RESPONSE_CAP);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });
});

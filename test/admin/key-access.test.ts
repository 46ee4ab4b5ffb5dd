// Settings > API, least privilege: permissions (a checkbox per scope) and allowed addresses at
// creation, the expiry choices (a date included) with keys that expire within 14 days marked,
// editing a key and rolling it (the new key shown once, the old one working for the overlap).
// Every refusal in the page's language, with what was typed kept and nothing created or changed.
// Both databases; clinic A speaks Spanish, clinic B English.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { dialects } from '../helpers/db.js';
import { ALL_SCOPES, buildDashboardApp, Client, csrfOf, EMAILS, shownKey, type DashboardApp, signedInOwners } from './helpers.js';

const API = '/dashboard/settings/api';
const DAY_MS = 86_400_000;

describe.each(dialects())('dashboard: permissions, addresses, expiry, edit and roll on %s', (dialect) => {
  let t: DashboardApp;
  let owner: Client;
  let ownerB: Client;
  beforeAll(async () => {
    t = await buildDashboardApp(dialect);
    ({ owner, ownerB } = await signedInOwners(t.app));
  });
  afterAll(async () => {
    await t?.close();
  });

  const keyNamed = async (clinicId: string, name: string) => (await t.keys.list(clinicId)).find((k) => k.name === name)!;
  const api = (key: string, path = '/api/v1/me', from = '127.0.0.1') =>
    t.app.inject({ url: path, headers: bearer(key), remoteAddress: from });
  /** A key made through the form; its value as shown once. */
  async function create(c: Client, form: Record<string, string | string[]>): Promise<string> {
    const res = await c.submit(API, `${API}/keys`, { expires: 'never', ...ALL_SCOPES, ...form });
    expect(res.statusCode, res.body).toBe(303);
    return shownKey((await c.get(API)).body)!;
  }

  it('the create form offers every permission, ticked, with what it lets a program read, in the page’s language', async () => {
    const es = (await owner.get(API)).body;
    for (const s of ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read'])
      expect(es).toMatch(new RegExp(`<input type="checkbox" id="scope-${s.replace(':', '-')}" name="scopes" value="${s}"[^>]*checked`));
    // webhooks:write is offered too, never ticked unless chosen.
    expect(es).toMatch(/<input type="checkbox" id="scope-webhooks-write" name="scopes" value="webhooks:write"(?![^>]*checked)[^>]*>/);
    expect(es).toContain('Suscripciones a eventos');
    expect(es).toContain('Teléfonos, correos electrónicos y notas de las citas');
    expect(es).toContain('un asistente de IA, Citas, Clientas y Llamadas, sin Datos de contacto');
    expect(es).toContain('Direcciones permitidas (opcional)');
    expect(es).toContain('<option value="date"');
    const en = (await ownerB.get(API)).body;
    expect(en).toContain('Phone numbers, e-mail addresses and appointment notes');
    expect(en).toContain('an AI assistant, Appointments, Clients and Calls, without Contact details');
    expect(en).toContain('On a date');
  });

  it('creates a key with the permissions and addresses chosen: listed, shown by /me, enforced by the API', async () => {
    const key = await create(owner, { name: 'Agenda', scopes: ['citas:read', 'eventos:read'], allowed_ips: '203.0.113.0/24\n2001:DB8::1' });
    const row = await keyNamed(t.clinicA.id, 'Agenda');
    expect([row.scopes, row.allowed_ips]).toEqual(['citas:read eventos:read', '203.0.113.0/24,2001:db8::1']);
    const list = (await owner.get(API)).body;
    expect(list).toMatch(
      new RegExp(
        `data-key-id="${row.id}"[\\s\\S]*?<li>Citas</li><li>Cambios</li></ul>\\s*<span class="sub">Solo desde 203.0.113.0/24, 2001:db8::1`,
      ),
    );
    expect((await api(key, '/api/v1/me', '203.0.113.9')).json().api_key.scopes).toEqual(['citas:read', 'eventos:read']);
    expect((await api(key, '/api/v1/citas', '203.0.113.9')).statusCode).toBe(200);
    expect((await api(key, '/api/v1/clientas', '203.0.113.9')).json().error.code).toBe('insufficient_scope');
    expect((await api(key, '/api/v1/citas', '198.51.100.1')).json().error.code).toBe('ip_not_allowed');
  });

  it.each([
    ['es', { scopes: [] as string[] }, ['Marca al menos un permiso de la lista.']],
    ['es', { scopes: ['citas:read', 'todo:read'] }, ['Marca al menos un permiso de la lista.']],
    ['es', { allowed_ips: '203.0.113.0/33, oficina' }, ['«203.0.113.0/33» no es una dirección', '«oficina» no es una dirección']],
    ['es', { allowed_ips: '203.0.113.7/24' }, ['el rango es 203.0.113.0/24']],
    ['es', { expires: 'date', expires_on: '2026-03-27' }, ['2026-03-27 ya pasó']],
    ['es', { expires: 'date', expires_on: '2026-02-30' }, ['«2026-02-30» no es una fecha']],
    ['en', { scopes: [] as string[] }, ['Tick at least one permission from the list.']],
    ['en', { allowed_ips: 'office' }, ['“office” is not an IPv4 or IPv6 address']],
    ['en', { expires: 'date', expires_on: '' }, ['“” is not a date']],
    ['en', { expires: 'date', expires_on: '2020-01-01' }, ['2020-01-01 has passed']],
  ])('%s: %j is refused in the page’s language, what was typed kept, nothing created', async (lang, form, texts) => {
    const c = lang === 'es' ? owner : ownerB;
    const clinic = lang === 'es' ? t.clinicA : t.clinicB;
    const before = (await t.keys.list(clinic.id)).length;
    const res = await c.submit(API, `${API}/keys`, { name: 'Rechazada', expires: 'never', ...ALL_SCOPES, ...form });
    expect(res.statusCode).toBe(400);
    for (const text of texts) expect(res.body).toContain(text);
    expect(res.body).toContain('aria-invalid="true"');
    expect(res.body).toContain('value="Rechazada"');
    if ('allowed_ips' in form) expect(res.body).toContain(`>${form.allowed_ips.replace(/</g, '&lt;')}</textarea>`);
    expect((await t.keys.list(clinic.id)).length).toBe(before);
  });

  it('expiry: 30, 90 or 365 days, or through the end of a date in the clinic’s time zone; keys due within 14 days are marked', async () => {
    const now = t.clock.now;
    await create(owner, { name: 'Un mes', expires: '30' });
    await create(owner, { name: 'Diez días', expires: 'date', expires_on: '2026-04-07' });
    await create(owner, { name: 'Hoy', expires: 'date', expires_on: '2026-03-28' });
    const tenDays = await keyNamed(t.clinicA.id, 'Diez días');
    // Madrid: 2026-04-08 00:00 is 22:00 UTC on the 7th (summer time)
    expect(Number(tenDays.expires_at)).toBe(Date.UTC(2026, 3, 7, 22) / 1000);
    expect(Number((await keyNamed(t.clinicA.id, 'Un mes')).expires_at)).toBe(Math.floor(now / 1000) + 30 * 86_400);
    const list = (await owner.get(API)).body;
    const row = (name: string) => new RegExp(`<span class="key-name">${name}</span>[\\s\\S]*?</tr>`).exec(list)![0];
    expect(row('Diez días')).toContain('Caduca en 10 días');
    expect(row('Hoy')).toContain('Caduca hoy');
    expect(row('Un mes')).not.toContain('badge-soon');
    // in English, from B's owner
    await create(ownerB, { name: 'Soon', expires: 'date', expires_on: '2026-03-29' });
    expect(/<span class="key-name">Soon<\/span>[\s\S]*?<\/tr>/.exec((await ownerB.get(API)).body)![0]).toContain('Expires in 1 day');
  });

  it('edit: the form shows the key as it is; saving changes name, permissions and addresses, read by the API at once', async () => {
    const key = await create(owner, { name: 'Editable', allowed_ips: '198.51.100.0/24' });
    const { id } = await keyNamed(t.clinicA.id, 'Editable');
    expect((await api(key, '/api/v1/clientas', '198.51.100.5')).statusCode).toBe(200);
    const page = await owner.get(`${API}/keys/${id}/edit`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Editar la clave «Editable»');
    expect(page.body).toContain('value="Editable"');
    expect(page.body).toContain('>198.51.100.0/24</textarea>');
    expect(page.body).not.toContain(key);
    const res = await owner.post(`${API}/keys/${id}/edit`, {
      _csrf: csrfOf(page.body),
      name: 'Editada',
      scopes: ['citas:read', 'contacto:read'],
      allowed_ips: '',
    });
    expect(res.statusCode).toBe(303);
    expect((await owner.get(API)).body).toContain('Se guardaron los cambios de la clave «Editada».');
    // the same instance refuses what the key no longer has, from the very next request
    expect((await api(key, '/api/v1/clientas', '192.0.2.1')).json().error).toMatchObject({
      code: 'insufficient_scope',
      scope: 'clientas:read',
    });
    expect((await api(key, '/api/v1/citas', '192.0.2.1')).statusCode).toBe(200);
    expect((await api(key)).json().api_key).toMatchObject({ nombre: 'Editada', scopes: ['citas:read', 'contacto:read'] });
  });

  it('edit: a refused form is a 400 with its errors, and nothing changes', async () => {
    await create(owner, { name: 'Intacta', scopes: ['llamadas:read'] });
    const { id } = await keyNamed(t.clinicA.id, 'Intacta');
    const page = await owner.get(`${API}/keys/${id}/edit`);
    const res = await owner.post(`${API}/keys/${id}/edit`, { _csrf: csrfOf(page.body), name: '', scopes: [], allowed_ips: '10.0.0.0/33' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('No se guardó nada.');
    expect(res.body).toContain('Ponle a la clave un nombre de 1 a 100 caracteres.');
    expect(res.body).toContain('Marca al menos un permiso de la lista.');
    expect(res.body).toContain('«10.0.0.0/33»');
    expect(await keyNamed(t.clinicA.id, 'Intacta')).toMatchObject({ scopes: 'llamadas:read', allowed_ips: null });
  });

  it('roll: a new key shown once with the old one’s name and permissions; the old one works for the overlap, then expires', async () => {
    const old = await create(owner, { name: 'Rotación', scopes: ['citas:read'], allowed_ips: '203.0.113.0/24' });
    const { id } = await keyNamed(t.clinicA.id, 'Rotación');
    const page = await owner.get(`${API}/keys/${id}/roll`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('¿Renovar la clave «Rotación»?');
    expect(page.body).toContain('Mientras la clave antigua siga funcionando, sigue a la nueva');
    expect(page.body).toMatch(/<option value="86400" selected>Durante 24 horas<\/option>/);
    const res = await owner.post(`${API}/keys/${id}/roll`, { _csrf: csrfOf(page.body), overlap: '86400' });
    expect(res.statusCode).toBe(303);
    const shown = await owner.get(API);
    const fresh = shownKey(shown.body)!;
    expect(fresh).toMatch(/^svc_/);
    expect(fresh).not.toBe(old);
    expect(shown.body).toContain('La clave antigua funciona hasta el');
    // both listed, the old one marked as replaced and no longer offered to roll
    const keys = (await t.keys.list(t.clinicA.id)).filter((k) => k.name === 'Rotación');
    expect(keys).toHaveLength(2);
    const next = keys.find((k) => k.id !== id)!;
    expect(next).toMatchObject({ scopes: 'citas:read', allowed_ips: '203.0.113.0/24', expires_at: null });
    const list = (await owner.get(API)).body;
    expect(list).toContain('Termina el ');
    expect(list).toContain('Sustituye a una clave que termina el ');
    expect(list).not.toContain(`${API}/keys/${id}/roll`);
    expect(list).toContain(`${API}/keys/${next.id}/roll`);
    // both work now (from an allowed address); the old one stops after 24 hours
    expect((await api(old, '/api/v1/citas', '203.0.113.2')).statusCode).toBe(200);
    expect((await api(fresh, '/api/v1/citas', '203.0.113.2')).statusCode).toBe(200);
    t.clock.now += DAY_MS;
    expect((await api(old, '/api/v1/citas', '203.0.113.2')).statusCode).toBe(401);
    expect((await api(fresh, '/api/v1/citas', '203.0.113.2')).statusCode).toBe(200);
    // a day later the sessions have ended too: sign in again; rolling the old key goes back to the list
    await owner.signIn(EMAILS.ownerA);
    await ownerB.signIn(EMAILS.ownerB);
    expect((await owner.get(`${API}/keys/${id}/roll`)).statusCode).toBe(303);
  });

  it('roll in English, at once: the old key stops now; an overlap not offered is refused and nothing is made', async () => {
    const old = await create(ownerB, { name: 'Nightly export' });
    const { id } = await keyNamed(t.clinicB.id, 'Nightly export');
    const page = await ownerB.get(`${API}/keys/${id}/roll`);
    expect(page.body).toContain('Roll the key “Nightly export”?');
    const bad = await ownerB.post(`${API}/keys/${id}/roll`, { _csrf: csrfOf(page.body), overlap: '999999' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('Choose how long the old key keeps working.');
    expect((await t.keys.list(t.clinicB.id)).filter((k) => k.name === 'Nightly export')).toHaveLength(1);
    expect((await ownerB.post(`${API}/keys/${id}/roll`, { _csrf: csrfOf(page.body), overlap: '0' })).statusCode).toBe(303);
    expect((await ownerB.get(API)).body).toContain('The old key no longer works.');
    expect((await api(old)).statusCode).toBe(401);
  });

  it('during the overlap the old key follows the new one: narrowed with it, revoked with it; the list marks which is which', async () => {
    const old = await create(owner, { name: 'Filtrada' });
    const { id } = await keyNamed(t.clinicA.id, 'Filtrada');
    const rollPage = await owner.get(`${API}/keys/${id}/roll`);
    expect((await owner.post(`${API}/keys/${id}/roll`, { _csrf: csrfOf(rollPage.body), overlap: '604800' })).statusCode).toBe(303);
    const fresh = shownKey((await owner.get(API)).body)!;
    const next = (await t.keys.list(t.clinicA.id)).find((k) => k.name === 'Filtrada' && k.id !== id)!;
    const list = (await owner.get(API)).body;
    expect(list).toMatch(
      new RegExp(`data-key-id="${id}"[\\s\\S]*?<span class="badge badge-replaced">Sustituida</span>\\s*<span class="sub">Termina el `),
    );
    expect(list).toMatch(
      new RegExp(`data-key-id="${next.id}"[\\s\\S]*?Activa</span><span class="sub">Sustituye a una clave que termina el `),
    );
    // the old key is not edited on its own: it follows its replacement
    expect((await owner.get(`${API}/keys/${id}/edit`)).statusCode).toBe(303);
    expect(list).not.toContain(`${API}/keys/${id}/edit`);
    // both read everything now (the old one is in this instance's key cache)
    expect((await api(old, '/api/v1/clientas')).statusCode).toBe(200);
    expect((await api(fresh, '/api/v1/clientas')).statusCode).toBe(200);
    const edit = await owner.get(`${API}/keys/${next.id}/edit`);
    expect(edit.body).toContain('La clave antigua a la que sustituye esta funciona hasta el');
    const saved = await owner.post(`${API}/keys/${next.id}/edit`, {
      _csrf: csrfOf(edit.body),
      name: 'Filtrada',
      scopes: ['citas:read'],
      allowed_ips: '',
    });
    expect(saved.statusCode).toBe(303);
    // narrowing the new key narrowed the old one, from its next request
    const narrowed = await api(old, '/api/v1/clientas');
    expect([narrowed.statusCode, narrowed.json().error.code, narrowed.json().error.scope]).toEqual([
      403,
      'insufficient_scope',
      'clientas:read',
    ]);
    expect((await api(old, '/api/v1/citas')).statusCode).toBe(200);
    expect(await keyNamed(t.clinicA.id, 'Filtrada')).toMatchObject({ scopes: 'citas:read' });
    // revoking the new key revokes the old one too
    const confirm = await owner.get(`${API}/keys/${next.id}/revoke`);
    expect(confirm.body).toContain('También se revoca la clave antigua a la que sustituye esta');
    expect((await owner.post(`${API}/keys/${next.id}/revoke`, { _csrf: csrfOf(confirm.body) })).statusCode).toBe(303);
    expect((await api(old, '/api/v1/citas')).statusCode).toBe(401);
    expect((await api(fresh, '/api/v1/citas')).statusCode).toBe(401);
    expect((await t.keys.get(t.clinicA.id, id))!.revoked_at).not.toBeNull();
  });

  it('revoking the old key alone ends it now; the new one keeps working (en)', async () => {
    const old = await create(ownerB, { name: 'Leaked' });
    const { id } = await keyNamed(t.clinicB.id, 'Leaked');
    const rollPage = await ownerB.get(`${API}/keys/${id}/roll`);
    expect((await ownerB.post(`${API}/keys/${id}/roll`, { _csrf: csrfOf(rollPage.body), overlap: '86400' })).statusCode).toBe(303);
    const fresh = shownKey((await ownerB.get(API)).body)!;
    const list = (await ownerB.get(API)).body;
    expect(list).toMatch(new RegExp(`data-key-id="${id}"[\\s\\S]*?>Replaced</span>\\s*<span class="sub">Ends at `));
    const confirm = await ownerB.get(`${API}/keys/${id}/revoke`);
    expect(confirm.body).toContain('Only this old key is revoked; the new one keeps working.');
    expect((await ownerB.post(`${API}/keys/${id}/revoke`, { _csrf: csrfOf(confirm.body) })).statusCode).toBe(303);
    expect((await api(old)).statusCode).toBe(401);
    expect((await api(fresh)).statusCode).toBe(200);
    expect((await ownerB.get(API)).body).not.toContain('Replaces a key that ends at');
  });

  it('staff may not edit or roll; another clinic’s key is not found; forms need their CSRF token; revoked keys go back to the list', async () => {
    await create(owner, { name: 'Protegida' });
    const { id } = await keyNamed(t.clinicA.id, 'Protegida');
    const staff = new Client(t.app, '203.0.113.9');
    await staff.signIn(EMAILS.staffA);
    expect((await staff.get(`${API}/keys/${id}/edit`)).statusCode).toBe(403);
    expect((await staff.get(`${API}/keys/${id}/roll`)).statusCode).toBe(403);
    const token = csrfOf((await staff.get(API)).body);
    expect((await staff.post(`${API}/keys/${id}/edit`, { _csrf: token, name: 'x', ...ALL_SCOPES })).statusCode).toBe(403);
    expect((await staff.post(`${API}/keys/${id}/roll`, { _csrf: token, overlap: '0' })).statusCode).toBe(403);
    expect((await staff.get(API)).body).not.toContain(`${API}/keys/${id}/edit`);
    // B's owner cannot reach A's key, not even by its id
    expect((await ownerB.get(`${API}/keys/${id}/edit`)).statusCode).toBe(404);
    const bToken = csrfOf((await ownerB.get(API)).body);
    expect((await ownerB.post(`${API}/keys/${id}/roll`, { _csrf: bToken, overlap: '0' })).statusCode).toBe(404);
    // no token, or a token from another session
    expect((await owner.post(`${API}/keys/${id}/edit`, { name: 'x', ...ALL_SCOPES })).statusCode).toBe(403);
    expect((await owner.post(`${API}/keys/${id}/roll`, { _csrf: bToken, overlap: '0' })).statusCode).toBe(403);
    expect(await keyNamed(t.clinicA.id, 'Protegida')).toMatchObject({ name: 'Protegida', replaced_by: null });
    await t.keys.revoke(t.clinicA.id, id);
    expect((await owner.get(`${API}/keys/${id}/edit`)).statusCode).toBe(303);
    expect((await owner.get(`${API}/keys/${id}/roll`)).statusCode).toBe(303);
  });

  it('a superadmin edits and rolls a clinic’s key through the clinic in view', async () => {
    const su = new Client(t.app, '203.0.113.10');
    await su.signIn(EMAILS.superadmin);
    await create(ownerB, { name: 'Support' });
    const { id } = await keyNamed(t.clinicB.id, 'Support');
    const q = `?clinic=${t.clinicB.id}`;
    const page = await su.get(`${API}/keys/${id}/edit${q}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`action="${API}/keys/${id}/edit${q}"`);
    const res = await su.post(`${API}/keys/${id}/edit${q}`, {
      _csrf: csrfOf(page.body),
      name: 'Support',
      scopes: ['eventos:read'],
      allowed_ips: '',
    });
    expect(res.headers.location).toBe(`${API}${q}`);
    expect((await keyNamed(t.clinicB.id, 'Support')).scopes).toBe('eventos:read');
    // without the clinic, the key is not found
    expect((await su.get(`${API}/keys/${id}/edit`)).statusCode).toBe(404);
  });
});

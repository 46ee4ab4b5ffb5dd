// Connecting by OAuth 2, as the integration does when published with CLINIC_API_AUTH=oauth2, on a
// real server with OAuth on: Zapier registered as an app (its redirect URI), the authorization URL
// the integration builds (Zapier adds PKCE's challenge itself), the owner's consent on the
// dashboard's real pages, the code exchanged with PKCE's verifier, the connection's test and
// label, a search and a subscription with the token, a refresh that rotates the refresh token,
// and a spent refresh token that asks the user to reconnect.
import { createHash, randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { App, approve, Browser, EMAILS, startOAuthServer, type OAuthServer } from '../../../test/oauth/helpers.js';
import { OAUTH_SCOPES, oauth2Authentication } from '../src/authentication';
import type { Subscription } from '../src/triggers';
import { seedRecords } from '../../../test/helpers/app.js';
import { clientaRecord, messageOf, uid, zapierFor } from './harness';

/** Zapier's redirect URI for an integration (its app id in the path). */
const ZAPIER_REDIRECT = 'https://zapier.com/dashboard/auth/oauth/return/App123456CLIAPI/';

const LUCIA = uid('a', 1, 1);
const get = async (path: string, token: string) =>
  (await fetch(`${s.origin}${path}`, { headers: { authorization: `Bearer ${token}` } })).json();

/** What the owner ticks on the consent page. */
const GRANTED = ['citas:read', 'clientas:read', 'llamadas:read', 'eventos:read', 'contacto:read', 'webhooks:write'];

let s: OAuthServer;

describe('connecting by OAuth 2', () => {
  let owner: Browser;
  let zap: ReturnType<typeof zapierFor>;
  beforeAll(async () => {
    s = await startOAuthServer('sqlite', { WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = new Browser(s.origin);
    await owner.signIn(EMAILS.ownerA);
    await seedRecords(s.database, s.clinicA, [clientaRecord(LUCIA, 'Lucía Gómez', '+34644555001')], s.clock.now);
    // Whoever publishes the integration registers it once and sets CLIENT_ID (zapier env:set).
    const registered = await App.register(s.origin, `${s.origin}/api/v1`, 'Zapier', ZAPIER_REDIRECT);
    process.env.CLIENT_ID = registered.client.client_id;
    zap = zapierFor(s.origin, 'oauth2');
  });
  afterAll(async () => {
    await s?.close();
  });

  /** What Zapier does around the integration's authorizeUrl: state and PKCE of its own, then the owner's browser. */
  async function connect() {
    const config = oauth2Authentication.oauth2Config;
    const state = randomBytes(16).toString('base64url');
    const url = new URL((await zap.run(config.authorizeUrl, { inputData: { state, redirect_uri: ZAPIER_REDIRECT } })) as string);
    const verifier = randomBytes(32).toString('base64url');
    url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
    const { callback } = await approve(owner, url, { allow: GRANTED });
    expect(callback.origin + callback.pathname).toBe(ZAPIER_REDIRECT);
    expect(callback.searchParams.get('state')).toBe(state);
    const tokens = (await zap.run(config.getAccessToken, {
      inputData: { code: callback.searchParams.get('code'), state, redirect_uri: ZAPIER_REDIRECT, code_verifier: verifier },
    })) as { access_token: string; refresh_token: string };
    return { url, tokens };
  }

  it('the owner approves, the code becomes tokens, and the connection is the clinic, labelled with its name', async () => {
    expect(zap.app.authentication).toBe(oauth2Authentication);
    const { url, tokens } = await connect();
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: process.env.CLIENT_ID,
      response_type: 'code',
      scope: OAUTH_SCOPES,
      resource: `${s.origin}/api/v1`,
    });
    expect(Object.keys(tokens).sort()).toEqual(['access_token', 'refresh_token']);
    const me = (await zap.run(zap.app.authentication.test, { authData: tokens })) as { clinica: { nombre: string } };
    expect(me.clinica.nombre).toBe('Clínica Uno');
    expect(await zap.run(zap.app.authentication.connectionLabel, { authData: tokens, inputData: me })).toBe('Clínica Uno');
    // A step runs with the token as with a key.
    const found = await zap.run(zap.app.searches.find_client.operation.perform, { authData: tokens, inputData: { buscar: 'lucia' } });
    expect(found).toEqual([await get(`/api/v1/clientas/${LUCIA}`, tokens.access_token)]);
    // ...and an instant trigger subscribes and unsubscribes with it.
    const hook = zap.app.triggers.new_call.operation;
    const targetUrl = 'http://127.0.0.1:9/hooks/standard/1/abc/';
    const sub = (await zap.run(hook.performSubscribe, { authData: tokens, targetUrl })) as Subscription;
    expect(sub).toMatchObject({ url: targetUrl, eventos: ['llamada.creada'] });
    expect(await zap.run(hook.performUnsubscribe, { authData: tokens, subscribeData: sub })).toEqual({});
  });

  it('refresh: new tokens, the old refresh token spent; once the app is disconnected, Zapier is told to reconnect', async () => {
    const { tokens } = await connect();
    const config = oauth2Authentication.oauth2Config;
    const next = (await zap.run(config.refreshAccessToken, { authData: tokens })) as typeof tokens;
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(((await zap.run(zap.app.authentication.test, { authData: next })) as { clinica: { nombre: string } }).clinica.nombre).toBe(
      'Clínica Uno',
    );
    // Reusing a spent refresh token ends the connection (that is what a stolen one looks like).
    const err = await zap.run(config.refreshAccessToken, { authData: tokens }).catch((e: unknown) => e);
    expect(String(err)).toContain('RefreshAuthError');
    expect(messageOf(err)).toMatch(/^The connection to your clinic has ended/);
    // ...and the access token of the ended connection asks Zapier to refresh, which fails the same way.
    const stale = await zap.run(zap.app.authentication.test, { authData: next }).catch((e: unknown) => e);
    expect(String(stale)).toContain('RefreshAuthError');
  });
});

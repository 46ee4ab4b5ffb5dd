// The definition passes `zapier validate`'s schema checks, run offline the way the CLI runs them
// (zapier-platform-core's `validate` command: the definition with its functions compiled, through
// zapier-platform-schema's validator, functional constraints included), with either
// authentication; and every output field a record has is labelled for Zapier's field picker.
import { createRequire } from 'node:module';

import { afterEach, describe, expect, it } from 'vitest';

import { createApp } from '../src/app';
import { CITA_FIELDS, CITA_SAMPLE, CLIENTA_FIELDS, CLIENTA_SAMPLE, LLAMADA_FIELDS, LLAMADA_SAMPLE } from '../src/fields';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

// What the CLI's `zapier validate` calls (the package exports its src/ to require() only).
const { prepareApp, validateApp } = createRequire(import.meta.url)('zapier-platform-core/src/tools/schema') as {
  prepareApp: (app: object) => object;
  validateApp: (app: object) => { stack: string }[];
};

const errorsOf = (app: object) => validateApp(prepareApp(app));

describe("the Zapier definition and zapier validate's schema checks", () => {
  it.each(['api_key', 'oauth2'])('passes with %s authentication', (auth) => {
    process.env.CLINIC_API_AUTH = auth;
    const app = createApp();
    expect(app.authentication.type).toBe(auth === 'oauth2' ? 'oauth2' : 'custom');
    expect(errorsOf(app)).toEqual([]);
  });

  it('the check is real: a trigger without its noun, or a search without its description, fails it', () => {
    const app = createApp();
    const broken = {
      ...app,
      triggers: { ...app.triggers, new_call: { ...app.triggers.new_call!, noun: undefined } },
      searches: { ...app.searches, find_client: { ...app.searches.find_client!, display: { label: 'Find Client' } } },
    };
    expect(errorsOf(broken).map((e) => e.stack)).toEqual([
      'instance.triggers.new_call requires property "noun"',
      'instance.searches.find_client.display visible actions must have a label and description',
    ]);
  });

  it('five instant triggers and two searches, each with an English label for every field of its records', () => {
    const app = createApp();
    expect(Object.keys(app.triggers)).toEqual(['new_appointment', 'appointment_changed', 'new_call', 'new_client', 'client_changed']);
    expect(Object.keys(app.searches)).toEqual(['find_client', 'find_appointment']);
    for (const [key, t] of Object.entries(app.triggers)) expect([t.key, t.operation.type]).toEqual([key, 'hook']);
    for (const [key, s] of Object.entries(app.searches)) expect(s.key).toBe(key);
    for (const [fields, sample] of [
      [CITA_FIELDS, CITA_SAMPLE],
      [CLIENTA_FIELDS, CLIENTA_SAMPLE],
      [LLAMADA_FIELDS, LLAMADA_SAMPLE],
    ] as const) {
      expect(fields.map((f) => f.key)).toEqual(Object.keys(sample));
      for (const f of fields) expect(f.label).toMatch(/^[A-Z][\x20-\x7e]+$/);
    }
  });
});

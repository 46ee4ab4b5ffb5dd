// The integration through Zapier's own app tester against a real clinic-api on 127.0.0.1:
// connecting with a key (the test, the connection's label, a wrong key in plain words), the two
// searches, and each instant trigger's samples for the Zap editor (performList: real recent
// records, exactly as the API's lists show them, newest first).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { MESSAGES } from '../src/client';
import { A, messageOf, startClinic, uid, zapierFor, type Clinic } from './harness';

type Rec = Record<string, unknown> & { id: string };

describe('the Zapier integration against a real server', () => {
  let clinic: Clinic;
  let zap: ReturnType<typeof zapierFor>;
  beforeAll(async () => {
    clinic = await startClinic();
    zap = zapierFor(clinic.baseUrl);
  });
  afterAll(async () => {
    await clinic.close();
  });
  beforeEach(() => clinic.tick());

  const withKey = (key = clinic.key) => ({ authData: { api_key: key } });

  describe('authentication by API key', () => {
    it("the test reads /api/v1/me with the key, and the connection is labelled with the clinic's name", async () => {
      const app = zap.app;
      const me = (await zap.run(app.authentication.test, withKey())) as { clinica: { nombre: string } };
      expect(me).toEqual(await clinic.get('/api/v1/me'));
      const label = await zap.run(app.authentication.connectionLabel, { ...withKey(), inputData: me });
      expect(label).toBe('Clínica Uno');
      // The other clinic's key connects the other clinic.
      const other = (await zap.run(app.authentication.test, withKey(clinic.t.keyB))) as { clinica: { nombre: string } };
      expect(other.clinica.nombre).toBe('Clínica Dos');
    });

    it('a wrong, revoked or pasted-with-spaces key: a wrong one fails with a sentence an office manager can act on', async () => {
      const test = zap.app.authentication.test;
      for (const bad of ['svc_live_not-a-real-key', 'hello']) {
        const err = await zap.run(test, withKey(bad)).catch((e: unknown) => e);
        expect(messageOf(err)).toBe(MESSAGES.badKey);
      }
      const revoked = await clinic.t.keys.create({ clinicId: clinic.t.clinicA.id, name: 'Zapier', expiresAt: null, createdBy: null });
      await clinic.t.keys.revoke(clinic.t.clinicA.id, revoked.id);
      expect(messageOf(await zap.run(test, withKey(revoked.key)).catch((e: unknown) => e))).toBe(MESSAGES.badKey);
      // Spaces around a pasted key are not the user's mistake to fix.
      const me = (await zap.run(test, withKey(`  ${clinic.key}\n`))) as { clinica: { nombre: string } };
      expect(me.clinica.nombre).toBe('Clínica Uno');
    });

    it('a key without a permission the step needs: the message names the permission and where to give it', async () => {
      const narrow = await clinic.t.keys.create({
        clinicId: clinic.t.clinicA.id,
        name: 'citas only',
        expiresAt: null,
        createdBy: null,
        scopes: ['citas:read'],
      });
      const err = await zap
        .run(zap.app.searches.find_client.operation.perform, { ...withKey(narrow.key), inputData: { buscar: 'maria' } })
        .catch((e: unknown) => e);
      expect(messageOf(err)).toBe(MESSAGES.missingScope('clientas:read'));
    });
  });

  describe('searches', () => {
    const findClient = (buscar: string, key?: string) =>
      zap.run(zap.app.searches.find_client.operation.perform, { ...withKey(key), inputData: { buscar } }) as Promise<Rec[]>;
    const findAppointment = (id: string) =>
      zap.run(zap.app.searches.find_appointment.operation.perform, { ...withKey(), inputData: { id } }) as Promise<Rec[]>;

    it('find a client by phone, in any format, or by name ignoring accents and capitals: the records as the API has them', async () => {
      const maria = await clinic.get<Rec>(`/api/v1/clientas/${A.maria}`);
      expect(await findClient('+34 600 12 34 56')).toEqual([maria]);
      expect(await findClient('600123456')).toEqual([maria]);
      const byName = await findClient('MARIA');
      expect(byName.map((c) => c.id)).toEqual([A.maria, A.mariaLopez]);
      expect(byName[0]).toEqual(maria);
      expect(await findClient('angela ibanez')).toEqual([await clinic.get(`/api/v1/clientas/${A.angela}`)]);
      expect(await findClient('nadie se llama así')).toEqual([]);
    });

    it("a client of the other clinic is never found with this clinic's key", async () => {
      expect(await findClient('María Fernández')).toEqual([]);
      expect((await findClient('María Fernández', clinic.t.keyB)).map((c) => c.nombre)).toEqual(['María Fernández']);
    });

    it('an empty search is refused with a sentence, not sent', async () => {
      expect(messageOf(await findClient('   ').catch((e: unknown) => e))).toBe('Type a phone number or a name to look for.');
    });

    it('find an appointment by id: the record as the API has it; an unknown id finds nothing; a malformed one says what an id looks like', async () => {
      const id = uid('a', 2, 2);
      expect(await findAppointment(id)).toEqual([await clinic.get(`/api/v1/citas/${id}`)]);
      expect(await findAppointment(` ${id.toUpperCase()} `)).toEqual([await clinic.get(`/api/v1/citas/${id}`)]);
      expect(await findAppointment('0a000002-0000-4000-8000-999999999999')).toEqual([]);
      // Clinic B's appointment is not clinic A's.
      expect(await findAppointment(uid('b', 2, 1))).toEqual([]);
      const err = await findAppointment('cita 12').catch((e: unknown) => e);
      expect(messageOf(err)).toMatch(/^"cita 12" is not an appointment ID: an ID looks like 24858e88-/);
    });
  });

  describe("instant triggers' samples (performList)", () => {
    const list = (key: keyof typeof zap.app.triggers) => zap.run(zap.app.triggers[key].operation.performList, withKey()) as Promise<Rec[]>;
    const all = async (collection: string) =>
      (await clinic.get<Record<string, Rec[]>>(`/api/v1/${collection}?updated_since=2000-01-01T00:00:00Z&limit=500`))[collection]!;
    const newest = (records: Rec[], by: string) =>
      [...records].sort((a, b) => Date.parse(String(b[by])) - Date.parse(String(a[by])) || (a.id < b.id ? 1 : -1)).slice(0, 10);

    it('each trigger samples real records of its collection, newest first (created or changed), exactly as the lists show them', async () => {
      const citas = await all('citas');
      const clientas = await all('clientas');
      const llamadas = await all('llamadas');
      expect(citas.length).toBeGreaterThan(10);
      expect(await list('new_appointment')).toEqual(newest(citas, 'created_at'));
      expect(await list('appointment_changed')).toEqual(newest(citas, 'updated_at'));
      expect(await list('new_client')).toEqual(newest(clientas, 'created_at'));
      expect(await list('client_changed')).toEqual(newest(clientas, 'updated_at'));
      expect(await list('new_call')).toEqual(newest(llamadas, 'created_at'));
    });

    it('a change made now leads its samples: a new client, a cancelled appointment', async () => {
      clinic.tick(60_000);
      const id = uid('a', 1, 900);
      const cita = uid('a', 2, 3);
      await clinic.importA([
        {
          type: 'clienta',
          id,
          nombre: 'Zoe Nueva',
          telefono: '+34655000900',
          email: null,
          idioma: 'es',
          vip: false,
          cliente_desde: '2026-03-28',
          created_at: '2026-03-28T13:05:00+01:00',
        },
        {
          type: 'cita',
          id: cita,
          clienta_id: A.mario,
          fecha_hora: '2026-03-28T09:00:00+01:00',
          servicio: 'Limpieza facial',
          duracion_min: 60,
          precio: 55.5,
          estado: 'cancelada',
          profesional_nombre: 'Laura Martín',
          sede_nombre: 'Sede Centro',
          created_at: '2026-03-01T09:00:00+01:00',
        },
      ]);
      expect((await list('new_client'))[0]).toEqual(await clinic.get(`/api/v1/clientas/${id}`));
      const [changed] = await list('appointment_changed');
      expect(changed).toEqual(await clinic.get(`/api/v1/citas/${cita}`));
      expect(changed).toMatchObject({ estado: 'cancelada', fecha_hora: '2026-03-28T09:00:00+01:00' });
      // Not a new appointment: it was booked on 1 March.
      expect((await list('new_appointment')).map((r) => r.id)).not.toContain(cita);
    });

    it("every field of the API's records has its label in the field picker, in the API's order", async () => {
      for (const [key, t] of Object.entries(zap.app.triggers)) {
        const [item] = await list(key as keyof typeof zap.app.triggers);
        expect(
          t.operation.outputFields.map((f) => f.key),
          key,
        ).toEqual(Object.keys(item!));
        expect(Object.keys(t.operation.sample), key).toEqual(Object.keys(item!));
      }
    });

    it("the samples of a clinic are never the other clinic's", async () => {
      const ids = (await list('new_call')).map((r) => r.id);
      expect(ids.every((i) => i.startsWith('0a'))).toBe(true);
    });
  });
});

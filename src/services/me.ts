// GET /me: who the request's API key is. Everything comes from the authenticated key, which the
// key service already holds (cached with the look-up that authenticated the request), so the
// answer costs no database work of its own. Timestamps in the clinic's offset, as everywhere. A
// test key names its live clinic (the sandbox is that clinic's) and says `modo: test`.
import type { MeResponse } from '../domain/api-schemas.js';
import { formatTimestamp } from '../time.js';
import type { AuthenticatedKey } from './api-keys.js';

export function whoAmI(key: AuthenticatedKey, limits: { rate: number; burst: number }): MeResponse {
  const tz = key.timezone;
  return {
    clinica: { id: key.ownerClinicId, nombre: key.clinicName, zona_horaria: tz, moneda: key.currency },
    api_key: {
      id: key.keyId,
      nombre: key.keyName,
      created_at: formatTimestamp(key.createdAt, tz),
      expires_at: key.expiresAt === null ? null : formatTimestamp(key.expiresAt, tz),
      scopes: [...key.scopes],
    },
    rate_limit: { rps: limits.rate, burst: limits.burst },
    modo: key.mode,
  };
}

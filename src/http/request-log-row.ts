// A request-log row from what the API's hook collected (services/request-log.ts), with the SAME
// masking as the logs (./log.ts): the path and every parameter name and value masked wherever a
// key, token or secret was pasted, personal filters (`q`) and unknown parameters masked whatever
// they hold; no header is kept but the user agent, truncated and masked the same way; an error's
// body (the JSON the client got, which may quote what it sent) masked too. Masked whole, then
// truncated (a cut could leave part of a secret no rule recognises). Called at write time, off the
// request's path.
import type { RequestLogRow } from '../repos/request-log.js';
import type { RawLogEntry } from '../services/request-log.js';
import { redactUrl, secretMasker } from './log.js';

/** User agents are kept to this many characters. */
export const USER_AGENT_MAX = 200;
/** Error bodies are kept to this many characters (the API's are far shorter). */
export const ERROR_BODY_MAX = 4_000;

export function requestLogRowMaker(keyPrefix: string): (e: RawLogEntry) => Omit<RequestLogRow, 'access_set'> {
  const mask = secretMasker(keyPrefix);
  return (e) => {
    const url = redactUrl(e.url, mask);
    const q = url.indexOf('?');
    return {
      clinic_id: e.clinicId,
      at_ms: e.atMs,
      request_id: e.requestId,
      key_id: e.keyId,
      grant_id: e.grantId,
      method: e.method,
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 || q === url.length - 1 ? null : url.slice(q + 1),
      status: e.status,
      error_code: e.errorCode,
      duration_ms: Math.round(e.durationMs * 10) / 10,
      records: e.records,
      client_ip: e.ip,
      user_agent: e.userAgent === null ? null : mask(e.userAgent).slice(0, USER_AGENT_MAX),
      error_body: e.errorBody === null ? null : mask(e.errorBody).slice(0, ERROR_BODY_MAX),
    };
  };
}

// What reaches the logs. Secrets never do: no headers are logged (Authorization carries keys),
// and of the query string only the values of non-personal filters are kept; `q` (a name or a
// phone) and anything unknown (someone may paste a key as ?api_key=) are masked.
import type { FastifyRequest } from 'fastify';

const SAFE_PARAMS = new Set(['desde', 'hasta', 'limit', 'offset', 'vip', 'estado', 'resultado']);

export function redactUrl(url: string): string {
  const i = url.indexOf('?');
  if (i < 0) return url;
  const params = new URLSearchParams(url.slice(i + 1));
  const parts: string[] = [];
  for (const [k, v] of params) parts.push(`${encodeURIComponent(k)}=${SAFE_PARAMS.has(k) ? encodeURIComponent(v) : '[redacted]'}`);
  return `${url.slice(0, i)}?${parts.join('&')}`;
}

export const logSerializers = {
  req: (req: FastifyRequest) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
};

// Rules between variables, checked once every variable is valid on its own. Each names the
// variable to fix; `doc` is what the docs' tables add to that variable's allowed values.
import type { StaticDecode } from '@sinclair/typebox';
import type { ConfigSchema } from './variables.js';

type Values = StaticDecode<typeof ConfigSchema>;

export interface CrossRule {
  variable: string;
  doc: string;
  /** What is wrong (after "NAME: "), or null. */
  problem: (c: Values) => string | null;
}

export const CROSS_RULES: readonly CrossRule[] = [
  {
    variable: 'RATE_LIMIT_BURST',
    doc: 'at least `RATE_LIMIT_RPS`',
    problem: (c) =>
      c.rateLimitBurst >= c.rateLimitRps
        ? null
        : `must be at least RATE_LIMIT_RPS (${c.rateLimitRps}): a burst smaller than one second of the sustained rate cannot be sustained`,
  },
  {
    variable: 'AUTH_FAIL_BURST',
    doc: 'at least `AUTH_FAIL_RPS`',
    problem: (c) => (c.authFailBurst >= c.authFailRps ? null : `must be at least AUTH_FAIL_RPS (${c.authFailRps})`),
  },
  {
    // A generated pepper would live in one machine's DATA_DIR only.
    variable: 'API_KEY_PEPPER',
    doc: 'required with `DATABASE_URL`',
    problem: (c) =>
      c.databaseUrl === null || c.apiKeyPepper !== null
        ? null
        : 'must be set when DATABASE_URL is set: every instance and the CLI must share one secret (a generated one would live in one ' +
          "machine's DATA_DIR only); e.g. `openssl rand -base64 48`",
  },
  {
    variable: 'REQUEST_TIMEOUT_MS',
    doc: 'at least `HEADERS_TIMEOUT_MS`',
    problem: ({ http }) =>
      http.requestTimeoutMs >= http.headersTimeoutMs
        ? null
        : `must be at least HEADERS_TIMEOUT_MS (${http.headersTimeoutMs}): the whole request cannot arrive before its headers`,
  },
  {
    // Nothing moves on a connection while its request waits for the database: a shorter limit
    // would cut off requests the database is still allowed to answer.
    variable: 'SOCKET_TIMEOUT_MS',
    doc: 'at least `DB_STATEMENT_TIMEOUT_MS` + `DB_CONNECT_TIMEOUT_MS` + 1000',
    problem: (c) => {
      const busiest = c.dbStatementTimeoutMs + c.dbConnectTimeoutMs + 1_000;
      return c.http.socketTimeoutMs >= busiest
        ? null
        : `must be at least DB_STATEMENT_TIMEOUT_MS + DB_CONNECT_TIMEOUT_MS + 1000 (${busiest}): a request waiting for the database ` +
            `moves no bytes`;
    },
  },
  {
    variable: 'WEBHOOK_RETRY_MAX_MS',
    doc: 'at least `WEBHOOK_RETRY_BASE_MS`',
    problem: ({ webhooks: w }) => (w.retryMaxMs >= w.retryBaseMs ? null : `must be at least WEBHOOK_RETRY_BASE_MS (${w.retryBaseMs})`),
  },
  {
    // A lease must outlive the attempt it covers, or another instance could take the endpoint
    // over while a request is still in flight (a duplicate delivery in the normal case).
    variable: 'WEBHOOK_LEASE_MS',
    doc: 'at least `WEBHOOK_TIMEOUT_MS` + 1000',
    problem: ({ webhooks: w }) =>
      w.leaseMs >= w.timeoutMs + 1_000
        ? null
        : `must be at least WEBHOOK_TIMEOUT_MS + 1000 (${w.timeoutMs + 1_000}): a lease must outlive a delivery attempt`,
  },
];

// The only reader of process.env. loadConfig() validates every variable up front and names the
// bad one, so a mistyped deployment fails at start-up instead of misbehaving later.
import path from 'node:path';
import { PLANS, type Plan } from './domain/records.js';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly redisUrl: string | null;
  readonly apiKeyPrefix: string;
  /** null: generated into / read from DATA_DIR by resolvePepper(). */
  readonly apiKeyPepper: string | null;
  readonly rateLimitRps: number;
  readonly rateLimitBurst: number;
  readonly authFailRps: number;
  readonly authFailBurst: number;
  readonly apiPlans: readonly Plan[];
  readonly logLevel: string;
  readonly trustProxy: boolean;
  readonly dbPoolMax: number;
  readonly dbStatementTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function str(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

function databaseUrl(env: Env): string | null {
  const url = str(env, 'DATABASE_URL');
  if (url === null) return null;
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// URL; unset it to use the embedded SQLite database in DATA_DIR');
  }
  try {
    new URL(url);
  } catch {
    throw new ConfigError('DATABASE_URL', 'is not a valid URL (percent-encode special characters in the password)');
  }
  return url;
}

function plans(env: Env): Plan[] {
  const raw = str(env, 'API_PLANS');
  if (raw === null) return ['pro_total', 'enterprise', 'premium'];
  const list = raw.split(',').map((p) => p.trim()).filter(Boolean);
  const bad = list.filter((p) => !(PLANS as readonly string[]).includes(p));
  if (list.length === 0 || bad.length > 0) {
    throw new ConfigError('API_PLANS', `must be a comma-separated list of ${PLANS.join(', ')}; unknown: ${bad.join(', ') || '(empty)'}`);
  }
  return list as Plan[];
}

export function loadConfig(env: Env = process.env): Config {
  const host = str(env, 'HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) throw new ConfigError('HOST', `is not a host name or IP address: "${host}"`);

  const prefix = str(env, 'API_KEY_PREFIX') ?? 'svc';
  if (!/^[a-z][a-z0-9]{1,15}$/.test(prefix)) {
    throw new ConfigError('API_KEY_PREFIX', 'must be 2 to 16 lowercase letters or digits, starting with a letter (e.g. "svc")');
  }

  const pepper = str(env, 'API_KEY_PEPPER');
  if (pepper !== null && pepper.length < 32) {
    throw new ConfigError('API_KEY_PEPPER', 'must be at least 32 characters of secret (e.g. `openssl rand -base64 48`); unset it to have one generated into DATA_DIR');
  }

  const redisUrl = str(env, 'REDIS_URL');
  if (redisUrl !== null) {
    throw new ConfigError('REDIS_URL', 'shared rate limits in Redis are not available in this version; unset REDIS_URL (each instance then limits in memory)');
  }

  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);

  const trust = (str(env, 'TRUST_PROXY') ?? 'false').toLowerCase();
  if (!['true', 'false'].includes(trust)) throw new ConfigError('TRUST_PROXY', 'must be true or false');

  return Object.freeze({
    port: int(env, 'PORT', 3000, 0, 65535),
    host,
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './data'),
    databaseUrl: databaseUrl(env),
    redisUrl: null,
    apiKeyPrefix: prefix,
    apiKeyPepper: pepper,
    rateLimitRps: int(env, 'RATE_LIMIT_RPS', 60, 1, 100_000),
    rateLimitBurst: int(env, 'RATE_LIMIT_BURST', 120, 1, 1_000_000),
    authFailRps: int(env, 'AUTH_FAIL_RPS', 10, 1, 100_000),
    authFailBurst: int(env, 'AUTH_FAIL_BURST', 20, 1, 1_000_000),
    apiPlans: Object.freeze(plans(env)),
    logLevel,
    trustProxy: trust === 'true',
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 5000, 100, 600_000),
  });
}

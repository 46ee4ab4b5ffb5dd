// Start-up failures told as their cause and their fix. A process that cannot reach its database,
// bind its port or write its DATA_DIR gets an error from the driver or the OS
// ("connect ECONNREFUSED 127.0.0.1:5432", "listen EADDRINUSE"); these functions turn the ones an
// operator can fix into a DomainError `environment` that names the variable to change. Pure: they
// read the error's code and message only, so they sit with config and errors, below the drivers.
// What they print of DATABASE_URL never holds its password.
import type { Config } from './config.js';
import { DomainError } from './errors.js';

type Coded = Error & { code?: unknown; errors?: unknown; address?: unknown; port?: unknown };

/** The error's code; for an AggregateError (a host name with several addresses), its first inner one's. */
export function codeOf(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Coded;
  if (typeof e.code === 'string') return e.code;
  if (Array.isArray(e.errors)) return codeOf(e.errors[0]);
  return undefined;
}

function environment(variable: string, message: string): DomainError {
  return new DomainError('environment', message, { field: variable });
}

/** DATABASE_URL as it may be shown: user, host, port and database, never the password or the query string. */
export function redactedDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username ? `${u.username}${u.password ? ':***' : ''}@` : '';
    return `${u.protocol}//${user}${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(not a valid URL)';
  }
}

/** `text` with DATABASE_URL's password (raw and percent-decoded) replaced: for messages from elsewhere. */
export function withoutDatabasePassword(text: string, url: string | null | undefined): string {
  if (!url) return text;
  let password: string;
  try {
    password = new URL(url).password;
  } catch {
    return text;
  }
  if (password === '') return text;
  let out = text.split(password).join('***');
  try {
    const decoded = decodeURIComponent(password);
    if (decoded !== '') out = out.split(decoded).join('***');
  } catch {
    // A password that is not valid percent-encoding only appears raw.
  }
  return out;
}

const TIMEOUT_RE = /timeout exceeded when trying to connect|connection timeout|Connection terminated unexpectedly/i;

/** PostgreSQL could not be reached or refused us: what happened and what to do about it. */
function postgresError(err: unknown, url: string): DomainError | null {
  const code = codeOf(err);
  let host = '';
  let port = '5432';
  let user = '';
  let database = '';
  try {
    const u = new URL(url);
    host = u.hostname;
    port = u.port || '5432';
    user = decodeURIComponent(u.username);
    database = decodeURIComponent(u.pathname.slice(1));
  } catch {
    // config validated the URL; keep the defaults if it somehow does not parse
  }
  const at = `DATABASE_URL (${redactedDatabaseUrl(url)})`;
  const say = (what: string, fix: string) =>
    environment(
      'DATABASE_URL',
      `cannot use the PostgreSQL database at ${at}: ${what}. ${fix}; or unset DATABASE_URL to use the embedded SQLite database in DATA_DIR`,
    );
  switch (code) {
    case 'ECONNREFUSED':
      return say(
        `connection refused: nothing listens on ${host}:${port}`,
        'Start PostgreSQL, or correct the host and port in DATABASE_URL',
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return say(`the host name "${host}" cannot be resolved`, 'Correct the host in DATABASE_URL');
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return say(`${host}:${port} cannot be reached (${code})`, 'Check the host, the port and any firewall between them');
    case '28P01':
    case '28000':
      return say(
        `the server refused user "${user}" (wrong user name or password, or not allowed by pg_hba.conf)`,
        'Correct the user name and password in DATABASE_URL (percent-encode special characters in them)',
      );
    case '3D000':
      return say(
        `the database "${database}" does not exist`,
        `Create it (e.g. createdb ${database || 'NAME'}), or correct the database name in DATABASE_URL`,
      );
    case '57P03':
      return say('the server is starting up or shutting down', 'Wait for it and start again');
    case '42501':
      return say(
        `user "${user}" may not create the tables (${(err as Error).message})`,
        "Grant it CREATE on the database's schema, or use its owner",
      );
    case 'ECONNRESET':
      return say(
        `${host}:${port} closed the connection (is it a PostgreSQL server? does it require TLS: add ?sslmode=require)`,
        'Check the host, the port and the TLS settings in DATABASE_URL',
      );
    default:
      if (err instanceof Error && TIMEOUT_RE.test(err.message)) {
        return say(
          `no answer from ${host}:${port} within 5 seconds`,
          'Check that the server is up, and the host, the port and any firewall',
        );
      }
      return null;
  }
}

const DATA_DIR_FS_CODES: Record<string, string> = {
  ENOTDIR: 'a file is in the way: it, or a directory above it, is a file',
  EEXIST: 'it is a file, not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'it is on a read-only file system',
  ENOSPC: 'the disk is full',
  EISDIR: 'a directory is where a file should be',
};

/** SQLite's codes for "cannot open or write the file". */
const SQLITE_FILE_RE = /^SQLITE_(CANTOPEN|READONLY|IOERR|FULL|PERM)/;

function dataDirError(err: unknown, dir: string): DomainError | null {
  const code = codeOf(err);
  if (code === undefined) return null;
  const why =
    DATA_DIR_FS_CODES[code] ?? (SQLITE_FILE_RE.test(code) ? `SQLite cannot open or write its database file there (${code})` : null);
  if (why === null) return null;
  return environment(
    'DATA_DIR',
    `DATA_DIR (${dir}) cannot be written: ${why}. Set DATA_DIR to a directory this user may write (it holds the embedded SQLite database ` +
      `and the generated API key pepper), or fix that one`,
  );
}

/**
 * An error met while opening the runtime (the pepper file, the database, its migrations) as the
 * operator's error when it is one, else `err` itself.
 */
export function explainRuntimeError(err: unknown, config: Config): unknown {
  if (err instanceof DomainError) return err;
  const explained = config.databaseUrl !== null ? postgresError(err, config.databaseUrl) : dataDirError(err, config.dataDir);
  return explained ?? err;
}

/** The pepper file lives in DATA_DIR whatever the database: its fs errors are DATA_DIR's. */
export function explainPepperError(err: unknown, config: Config): unknown {
  return dataDirError(err, config.dataDir) ?? err;
}

/** A failed listen() as the operator's error when it is one, else `err` itself. */
export function explainListenError(err: unknown, config: Config): unknown {
  const where = `${config.host}:${config.port}`;
  switch (codeOf(err)) {
    case 'EADDRINUSE':
      return environment(
        'PORT',
        `PORT ${config.port} is already in use on ${config.host} (another clinic-api, or another program, listens on ${where}). Stop it, ` +
          `or set PORT to a free port (e.g. PORT=${config.port === 3000 ? 3001 : 3000})`,
      );
    case 'EACCES':
      return environment(
        'PORT',
        `PORT ${config.port}: no permission to listen on it (ports below 1024 need privileges). Set PORT to 1024 or above, and put a ` +
          `reverse proxy in front for port 80/443`,
      );
    case 'EADDRNOTAVAIL':
      return environment(
        'HOST',
        `HOST ${config.host} is not an address of this machine. Set HOST to one of its addresses, 127.0.0.1, or 0.0.0.0 for every ` +
          `interface`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return environment(
        'HOST',
        `HOST ${config.host} cannot be resolved. Set HOST to an address of this machine, 127.0.0.1, or 0.0.0.0 for every interface`,
      );
    default:
      return err;
  }
}

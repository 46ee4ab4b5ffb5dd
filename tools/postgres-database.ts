// A fresh, empty database on a PostgreSQL server, for each test file (test/helpers/db.ts) and for
// the benchmarks and scripts. Needs only a client connection: the server may be the run's
// throw-away one (tools/postgres-server.ts) or any other (TEST_DATABASE_URL).
import pg from 'pg';

/**
 * Creates a fresh empty database on the server at `adminUrl` and returns its URL. An existing
 * database of that name is dropped first (its connections are terminated), so reruns against a
 * long-lived TEST_DATABASE_URL server start clean.
 */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  // Restricted so the name is a valid identifier and needs no escaping in the URL. PostgreSQL
  // would silently truncate a name over 63 bytes, and the returned URL would then be wrong.
  if (!/^[A-Za-z_][A-Za-z0-9_-]{0,62}$/.test(name)) {
    throw new Error(`createDatabase: invalid database name "${name}" (use 1-63 of [A-Za-z0-9_-], not starting with a digit or '-')`);
  }
  const url = new URL(adminUrl);
  const client = new pg.Client({ connectionString: adminUrl });
  client.on('error', () => {}); // a server shutting down mid-call must not crash the worker
  try {
    await client.connect();
    const ident = client.escapeIdentifier(name);
    await client.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
    // template0: really empty, even if someone installed things into template1 of a shared server.
    await client.query(`CREATE DATABASE ${ident} TEMPLATE template0`);
  } catch (err) {
    throw new Error(`createDatabase("${name}") on ${redact(url)} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    await client.end().catch(() => {});
  }
  url.pathname = `/${name}`;
  return url.toString();
}

function redact(url: URL): string {
  const u = new URL(url.toString());
  if (u.password) u.password = '***';
  return u.toString();
}

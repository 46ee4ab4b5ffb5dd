// The PostgreSQL pool as Kysely sees it, made safe against a server that goes away, restarts or
// stops answering. pg.Pool alone is not:
//
// - The pool listens for 'error' on a client only while the client is idle in the pool. A client
//   that Kysely holds between two statements (inside a transaction, or between a query's end and
//   its release) has no listener at all, and a server that ends its connection then (57P01
//   "terminating connection due to administrator command" on a restart) emits an 'error' event
//   nobody handles: the process dies. Every client here gets a listener of its own for its life.
// - A query that hits pg's client-side read timeout (a frozen server) is failed, but its client
//   goes back to the pool as if healthy, with the unanswered statement still on the wire, and the
//   next query on it waits behind that statement. A client whose query failed at the connection
//   level is released with the error here, so the pool destroys it and opens a fresh one.
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/** SQLSTATE classes and codes after which a connection cannot be trusted again. */
const CONNECTION_STATES = /^(08|57P0[1-4])/;
const CONNECTION_MESSAGES = /Query read timeout|Connection terminated|not queryable|connection error|ECONNRESET|EPIPE|socket/i;

/** True when `err` says the connection itself failed (not the statement): the client must go. */
export function isConnectionFault(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_STATES.test(code) || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT'))
    return true;
  return CONNECTION_MESSAGES.test(err.message);
}

class GuardedClient implements PostgresPoolClient {
  /** The connection-level error of the current checkout, if any: the pool destroys the client on release. */
  fault: Error | undefined;

  constructor(private readonly client: pg.PoolClient) {}

  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof sqlOrCursor !== 'string') return this.client.query(sqlOrCursor as never) as PostgresCursor<R>;
    return (this.client.query(sqlOrCursor, parameters as unknown[]) as unknown as Promise<PostgresQueryResult<R>>).catch((err: unknown) => {
      if (isConnectionFault(err)) this.fault = err as Error;
      throw err;
    });
  }

  release(): void {
    const fault = this.fault;
    this.fault = undefined;
    this.client.release(fault);
  }
}

/**
 * Wraps `pool` for Kysely's PostgresDialect. `onClientError` hears every error a client emits
 * outside a query (a server that ended the connection); the pool then drops the client.
 */
export function guardedPool(pool: pg.Pool, onClientError: (err: Error) => void): PostgresPool {
  pool.on('connect', (client) => {
    client.on('error', onClientError);
  });
  // Idle clients' errors reach the pool too (after it has removed the client).
  pool.on('error', onClientError);
  // One wrapper per client, so that Kysely (which keeps a connection object per client) sees the same one.
  const wrappers = new WeakMap<pg.PoolClient, GuardedClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let w = wrappers.get(client);
      if (!w) {
        w = new GuardedClient(client);
        wrappers.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}

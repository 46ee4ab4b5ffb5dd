// Slow and greedy clients (docs/operations.md, "Timeouts and caps"):
//
// - serverOptions(): Node's HTTP server limits, set when Fastify creates the server: headers must
//   arrive within HEADERS_TIMEOUT_MS and the whole request (body included) within
//   REQUEST_TIMEOUT_MS, checked every second (Node's default is every 30 s, which would let a
//   slowloris connection live up to 30 s past its limit); an idle keep-alive connection is closed
//   after KEEP_ALIVE_TIMEOUT_MS; a connection on which nothing moves for SOCKET_TIMEOUT_MS (a
//   client that stopped reading its response, or sending its request) is destroyed; the request
//   line and headers may take MAX_HEADER_BYTES. Refusals are answered by client-errors.ts. Node's
//   check that an HTTP/1.1 request has a Host header is off: host-header.ts makes it.
// - connectionLimits: at most MAX_CONNECTIONS_PER_ADDRESS open connections per client address
//   (the TCP peer: behind a proxy, the proxy's); one more is closed at once, before it is read,
//   except during a shutdown's drain: the connections accepted then are the last ones the kernel
//   queued (its listener closes as soon as none waits), each is answered and closed, and closing
//   one before it is read would reset the request it already sent.
//   And at most MAX_PIPELINED_REQUESTS requests waiting on one connection: Node parses every
//   request of a packet at once and keeps each answer in memory until the client reads the ones
//   before it, so a few kilobytes of pipelined requests from a client that never reads would
//   otherwise hold hundreds of megabytes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { HttpLimits } from '../../config.js';

/** How often Node checks the headers and request timeouts of open connections. */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Requests received on one connection and not yet answered; HTTP clients rarely pipeline at all. */
export const MAX_PIPELINED_REQUESTS = 16;

export function serverOptions(limits: HttpLimits): Pick<
  FastifyServerOptions,
  'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout'
> & {
  http: {
    headersTimeout: number;
    requestTimeout: number;
    maxHeaderSize: number;
    connectionsCheckingInterval: number;
    requireHostHeader: boolean;
  };
} {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.socketTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, limits.headersTimeoutMs),
      // Checked by host-header.ts instead, which answers in the API's error shape.
      requireHostHeader: false,
    },
  };
}

export const connectionLimits = fp(
  async (app, opts: { maxPerAddress: number }) => {
    // SOCKET_TIMEOUT_MS (and KEEP_ALIVE_TIMEOUT_MS, through the same event): with a listener here,
    // Node leaves the closing to us. Mid-response or mid-request is a stalled client, and counted.
    app.server.on('timeout', (socket: Socket & { _httpMessage?: unknown; parser?: { incoming?: { complete?: boolean } } | null }) => {
      const midRequest = socket.parser?.incoming ? socket.parser.incoming.complete === false : false;
      if (socket._httpMessage || midRequest) app.metrics.connectionsClosed.inc({ reason: 'stalled' });
      socket.destroy();
    });

    const waiting = new WeakMap<Socket, number>();
    app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      // The rest of a packet's requests still arrive after the socket was destroyed for them.
      if (socket.destroyed) return;
      const n = (waiting.get(socket) ?? 0) + 1;
      if (n > MAX_PIPELINED_REQUESTS) {
        app.metrics.connectionsClosed.inc({ reason: 'pipelining' });
        socket.destroy();
        return;
      }
      waiting.set(socket, n);
      res.once('close', () => waiting.set(socket, (waiting.get(socket) ?? 1) - 1));
    });

    if (opts.maxPerAddress <= 0) return;
    const open = new Map<string, number>();
    app.server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const n = open.get(address) ?? 0;
      if (n >= opts.maxPerAddress && !app.lifecycle.draining) {
        app.metrics.connectionsClosed.inc({ reason: 'per_address' });
        socket.destroy();
        return;
      }
      open.set(address, n + 1);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left > 0) open.set(address, left);
        else open.delete(address);
      });
    });
  },
  { name: 'connection-limits', dependencies: ['metrics', 'drain'] },
);

// A real webhook receiver: an HTTP server on 127.0.0.1 that records every request it gets and
// answers as the test tells it (a status, Retry-After, slowly, or never).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// until() lives in wait.ts; tests that imported it from here still may.
export { until } from './wait.js';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** the parsed body's id and tipo */
  id: string;
  tipo: string;
}

/** delayMs: answered that much later; after: answered once the promise settles. */
export type Answer =
  { status: number; headers?: Record<string, string>; delayMs?: number; after?: Promise<unknown>; body?: string } | 'never';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** requests whose answer was written out: what the sender can have seen as answered */
  answered: Received[];
  /** How the next requests are answered (default 200). */
  answer: (r: Received, n: number) => Answer;
  /** Requests currently held open (never answered, or waiting for their delay). */
  open: number;
  /** The most requests held open at once so far. */
  mostOpen: number;
  close(): Promise<void>;
}

/** A gate the test opens: a request answered `after: opened` is answered when it is. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

export async function startReceiver(path = '/hook', answer: Receiver['answer'] = () => ({ status: 200 }), port = 0): Promise<Receiver> {
  const held = new Set<http.ServerResponse>();
  const rec: Receiver = {
    url: '',
    port: 0,
    received: [],
    answered: [],
    answer,
    open: 0,
    mostOpen: 0,
    close: async () => {
      for (const res of held) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: { id?: string; tipo?: string } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        /* recorded as is */
      }
      const r: Received = { headers: req.headers, body, id: parsed.id ?? '', tipo: parsed.tipo ?? '' };
      rec.received.push(r);
      const a = rec.answer(r, rec.received.length);
      held.add(res);
      rec.mostOpen = Math.max(rec.mostOpen, ++rec.open);
      res.on('close', () => {
        held.delete(res);
        rec.open--;
      });
      // The sender went away (killed) before the answer: it never saw one, so it does not count.
      let senderGone = false;
      req.socket.once('end', () => {
        senderGone = true;
      });
      req.socket.once('close', () => {
        senderGone = true;
      });
      res.on('finish', () => {
        if (!senderGone) rec.answered.push(r);
      });
      if (a === 'never') return;
      const send = () => res.writeHead(a.status, a.headers).end(a.body ?? '');
      if (a.after) void a.after.then(send, send);
      else if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  rec.port = (server.address() as AddressInfo).port;
  rec.url = `http://127.0.0.1:${rec.port}${path}`;
  return rec;
}

// HTTP over a raw TCP socket, for what no HTTP client will send (bytes a parser refuses, a request
// sent a byte at a time, a response never read) and for watching when the server closes.
import net from 'node:net';

export interface RawConnection {
  socket: net.Socket;
  /** Everything received so far. */
  received(): Buffer;
  /** Resolves when the server has closed the connection (end or reset). */
  closed: Promise<void>;
  isClosed(): boolean;
  write(data: string | Buffer): Promise<void>;
  destroy(): void;
}

export function connect(port: number, opts: { localAddress?: string } = {}): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
    const chunks: Buffer[] = [];
    let done = false;
    const closed = new Promise<void>((res) => {
      socket.on('close', () => {
        done = true;
        res();
      });
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {}); // a reset shows as 'close'
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => Buffer.concat(chunks),
        closed,
        isClosed: () => done,
        write: (data) =>
          new Promise<void>((res) => {
            if (socket.destroyed) return res();
            socket.write(data, () => res());
          }),
        destroy: () => socket.destroy(),
      }),
    );
    socket.once('error', reject);
  });
}

export interface ParsedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The first response in `raw` (Content-Length framed, as the server's are). */
export function parseResponse(raw: Buffer | string): ParsedResponse | null {
  const text = Buffer.isBuffer(raw) ? raw.toString('latin1') : raw;
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = Buffer.from(text.slice(end + 4), 'latin1')
    .subarray(0, length)
    .toString('utf8');
  return { status, headers, body };
}

/** Sends `data`, then waits for the server to close; the first response, or null. */
export async function exchange(
  port: number,
  data: string | Buffer,
  opts: { localAddress?: string; timeoutMs?: number } = {},
): Promise<{ response: ParsedResponse | null; raw: Buffer }> {
  const c = await connect(port, opts);
  await c.write(data);
  const timer = setTimeout(() => c.destroy(), opts.timeoutMs ?? 5_000);
  await c.closed;
  clearTimeout(timer);
  return { response: parseResponse(c.received()), raw: c.received() };
}

/** Resolves true when `p` settles within `ms`. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<false>((r) => {
    timer = setTimeout(() => r(false), ms);
  });
  const out = await Promise.race([p.then(() => true as const), t]);
  clearTimeout(timer);
  return out;
}

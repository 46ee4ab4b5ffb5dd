// A real OTLP/HTTP receiver on loopback that accepts every export and discards it, for the
// traced case: the service pays for making, batching, encoding and sending its spans, and the
// receiver's cost stays out of the figures (it runs in the harness's process, not the server's).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HOST } from '../../tools/net.js';

export interface OtlpSink {
  /** the base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces) */
  endpoint: string;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // An empty ExportTraceServiceResponse: a 200 with no body is full success for OTLP/HTTP.
      res.writeHead(req.url === '/v1/traces' ? 200 : 404, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  // Never what keeps the harness alive.
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${HOST}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

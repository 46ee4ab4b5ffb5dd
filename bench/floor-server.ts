// The machine's floor for the rate-limit comparison (lib/limits.ts): a plain node:http server
// that answers every request with the same bytes the service sent for the case (status 200, the
// same body and content type), and does nothing else: no Fastify, no auth, no limiter, no
// database. Measured at the same rate, in the same rounds as the two services, its p99 is what
// this machine (its CPUs, the host's scheduling of them, loopback) gives any Node server at that
// rate and response size; the service's p99 beyond it is the service's. Started by lib/limits.ts:
//
//   FLOOR_BODY=<file> FLOOR_TYPE=<content type> PORT=... node --import tsx bench/floor-server.ts
import fs from 'node:fs';
import http from 'node:http';
import { need } from './lib/child-env.js';

const body = fs.readFileSync(need('floor-server', 'FLOOR_BODY'));
const headers = { 'content-type': need('floor-server', 'FLOOR_TYPE'), 'content-length': String(body.length) };
const port = Number(need('floor-server', 'PORT'));

http
  .createServer((req, res) => {
    // Read (and drop) any request body, as a server must, then answer the fixed bytes.
    req.resume();
    res.writeHead(200, headers);
    res.end(body);
  })
  .listen(port, process.env.HOST ?? '127.0.0.1');

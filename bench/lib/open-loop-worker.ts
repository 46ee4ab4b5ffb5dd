// The open loop's client (open-loop.ts) on a thread of its own, with its own heap: see fixedRate
// in measure.ts for why. Each message is a run's length in seconds; the answer is its result.
// The agent's keep-alive connections carry over from the warm-up to the measurement.
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { openLoop } from './open-loop.js';

export interface OpenLoopWorkerData {
  url: string;
  headers: Record<string, string>;
  rate: number;
  status: number;
}

const { url, headers, rate, status } = workerData as OpenLoopWorkerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
parentPort!.on('message', (seconds: number) => {
  void openLoop(url, headers, rate, seconds, { status, agent }).then((r) => parentPort!.postMessage(r));
});

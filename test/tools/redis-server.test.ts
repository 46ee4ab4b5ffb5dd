// tools/redis-server.ts's watchdog: a test process that dies without stopping its redis-server
// (SIGKILL, as a crashed worker) leaves neither a server running nor its temp dir, also when a
// fault test had frozen it. The fault helpers themselves are exercised by test/fleet/.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../tools/watchdog.js';
import { redisAvailable } from '../helpers/redis.js';
import { until } from '../helpers/wait.js';
import { killWorker, STATES } from './killed-worker.js';

describe.skipIf(!redisAvailable('the redis-server watchdog tests'))('startRedisServer', () => {
  it.each(STATES)('a test process killed with SIGKILL leaves neither its server running nor its dir (%s)', async (_label, frozen) => {
    const worker = { tool: 'redis-server.ts', start: 'startRedisServer', pid: 's.pid()', frozen };
    const { pid, dir } = await killWorker(worker, async (pid) => {
      expect((await fs.readFile(`/proc/${pid}/comm`, 'utf8')).trim()).toBe('redis-server');
      // The server runs in its temp dir.
      const dir = await fs.readlink(`/proc/${pid}/cwd`);
      expect(path.basename(dir)).toMatch(/^clinic-api-redis-/);
      return { pid, dir };
    });
    await until(() => !isAlive(pid), 'redis-server to exit', 10_000, 50);
    await until(() => !existsSync(dir), `the watchdog to delete ${dir}`, 10_000, 50);
  });
});

// REDIS_URL as logs and messages show it. Apart from link.ts so that naming Redis does not load
// node-redis (about 0.2 s at start-up), which only a process with REDIS_URL needs.

/** `url` without its password, for logs and messages. */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
}

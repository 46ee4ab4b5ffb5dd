// The GCRA of services/rate-limit.ts (MemoryGcraLimiter.decide) as one Lua script, so that every
// instance shares one bucket per key: read, decide and write happen atomically inside Redis, on
// Redis' clock (TIME), so the instances' own clocks do not matter. redis/link.ts runs it with
// EVALSHA and sends it whole (EVAL) when Redis answers NOSCRIPT, e.g. after a restart: as
// node-redis' defineScript would, but with the command's arguments built once per limiter rather
// than through a command parser per call (the call is on every API request's path).
//
// The arithmetic is the memory limiter's, line for line, in IEEE doubles (Lua's numbers): time in
// emission intervals ("ticks"), +1 per request, the same epsilon. test/unit/rate-limit.test.ts
// runs one table of scenarios against both. Two details keep it exact:
//  - the TAT is stored with %.17g: Lua's tostring keeps 14 digits, and at a slow rate (the
//    dashboard's one a minute) the rounded TAT would cost some bursts their last request;
//  - every reply is an integer (Redis truncates Lua numbers in replies).
// The key expires when its TAT is reached: from then on it is indistinguishable from a new key.
// With the caller's clock (the arithmetic tests' explicit times) the key is kept instead: an
// expiry counts in Redis' time, which a simulated clock does not follow.
//
// Two additions for an instance's local view of the bucket (services/shared-rate-limit.ts):
//  - `charge` (ARGV[5]): requests the instance already let through on its own, added to the TAT
//    before the decision, unconditionally (they have been answered);
//  - the fifth reply: how far the TAT is ahead of now after the call, in ticks, as a string with
//    every digit of the double (a number would be truncated to an integer), so the instance can
//    hold the same bucket, relative to its own clock.
import { createHash } from 'node:crypto';

const SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local take = ARGV[3] == '1'
local callers_clock = ARGV[4] ~= nil and ARGV[4] ~= ''
local charge = tonumber(ARGV[5] or '0') or 0
local now_ms
if callers_clock then
  now_ms = tonumber(ARGV[4])
else
  local t = redis.call('TIME')
  now_ms = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local now = now_ms * rate / 1000
local eps = 1e-9 + math.abs(now) * 1e-15
local function seconds(ticks)
  return math.max(0, math.ceil((ticks - eps) / rate))
end
local function store(tat)
  if callers_clock then
    redis.call('SET', KEYS[1], string.format('%.17g', tat))
  else
    redis.call('SET', KEYS[1], string.format('%.17g', tat), 'PX', math.max(1, math.ceil((tat - now) * 1000 / rate)))
  end
end
local tat = now
local stored = redis.call('GET', KEYS[1])
if stored then tat = math.max(tonumber(stored), now) end
if charge > 0 then tat = tat + charge end
local nxt = tat + 1
if nxt - now > burst + eps then
  if charge > 0 then store(tat) end
  return {0, 0, math.max(1, seconds(tat - now)), math.max(1, seconds(nxt - burst - now)), string.format('%.17g', tat - now)}
end
local after = tat
if take then after = nxt end
if take or charge > 0 then store(after) end
return {1, math.max(0, math.floor(burst - (after - now) + eps)), seconds(after - now), 0, string.format('%.17g', after - now)}
`;

/** [allowed (1|0), remaining, resetSeconds, retryAfterSeconds, the TAT's lead over now in ticks (decimal)] */
export type GcraReply = [number, number, number, number, string];

/** The script's source, for EVAL (after NOSCRIPT). */
export const GCRA_SOURCE = SCRIPT;
/** Its SHA1, for EVALSHA. */
export const GCRA_SHA1 = createHash('sha1').update(SCRIPT).digest('hex');

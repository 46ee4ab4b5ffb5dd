// The Lua the service runs in Redis, as node-redis scripts (defineScript): the client is created
// with them (link.ts), calls them by name, and sends each with EVALSHA, sending it whole (EVAL)
// when Redis answers NOSCRIPT (a restarted or flushed Redis): node-redis' own fallback.
//
// gcra: the GCRA of services/rate-limit.ts (MemoryGcraLimiter.decide) as one script, so that
// every instance shares one bucket per key: read, decide and write happen atomically inside Redis,
// on Redis' clock (TIME), so the instances' own clocks do not matter. The arithmetic is the memory
// limiter's, line for line, in IEEE doubles (Lua's numbers): time in emission intervals
// ("ticks"), +1 per request, the same epsilon. test/unit/rate-limit.test.ts runs one table of
// scenarios against both. Two details keep it exact:
//  - the TAT is stored with %.17g: Lua's tostring keeps 14 digits, and at a slow rate (the
//    dashboard's one a minute) the rounded TAT would cost some bursts their last request;
//  - every reply is an integer (Redis truncates Lua numbers in replies), but the fifth.
// The key expires when its TAT is reached: from then on it is indistinguishable from a new key.
// The fifth reply: how far the TAT is ahead of now after the call, in ticks, as a string with
// every digit of the double, so the instance's in-memory twin holds the same bucket on its own
// clock and goes on from it if Redis stops answering (services/shared-rate-limit.ts).
// ARGV[4], a clock in ms instead of TIME, is never sent by the service: the arithmetic table gives
// its own clock (a simulated clock is not Redis' time, so the key is then kept without expiry).
import { defineScript, type CommandParser } from 'redis';

const GCRA_SOURCE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local take = ARGV[3] == '1'
local callers_clock = ARGV[4] ~= nil
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
local nxt = tat + 1
if nxt - now > burst + eps then
  return {0, 0, math.max(1, seconds(tat - now)), math.max(1, seconds(nxt - burst - now)), string.format('%.17g', tat - now)}
end
local after = tat
if take then after = nxt end
if take then store(after) end
return {1, math.max(0, math.floor(burst - (after - now) + eps)), seconds(after - now), 0, string.format('%.17g', after - now)}
`;

/** [allowed (1|0), remaining, resetSeconds, retryAfterSeconds, the TAT's lead over now in ticks (decimal)] */
export type GcraReply = [number, number, number, number, string];

export const GCRA = defineScript({
  SCRIPT: GCRA_SOURCE,
  NUMBER_OF_KEYS: 1,
  /** `rate` and `burst` as decimal strings (each limiter makes them once). */
  parseCommand(parser: CommandParser, key: string, rate: string, burst: string, take: boolean) {
    parser.pushKey(key);
    parser.push(rate, burst, take ? '1' : '0');
  },
  transformReply: (reply: unknown) => reply as GcraReply,
});

/** The scripts the client is created with: `client.gcra(...)`. */
export const SCRIPTS = { gcra: GCRA };

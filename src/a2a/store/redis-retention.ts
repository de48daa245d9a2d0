import type Redis from 'ioredis';
import { defineScript, type ScriptCall } from './redis-scripts';

/** Index entries past their TTL dropped per call at most (their keys expired on their own). */
const EXPIRED_BATCH = 1_000;

/**
 * Expires a finished task's keys (its hash, its event stream, KEYS[7..]: the other keys that live as
 * long as it) after the TTL and takes it out of the run leases, then files it in the index of finished tasks (a sorted set by finish time, Redis's
 * clock, with each task's bytes: Redis's MEMORY USAGE of its hash and event stream), then
 * evicts the oldest finished tasks while more than maxRetainedTasks are filed or they hold more
 * than maxRetainedBytes: their hash, event stream, follower count, owner listing entry,
 * conversation entry and message claim. Index entries older than the TTL leave it first (their
 * keys expired by themselves). One atomic step, so instances filing at once never both overshoot.
 * Key names are built here from the prefix (one Redis, not a cluster, as for every other script).
 * The task's end costs one call this way, where the expiry and the filing were two.
 * KEYS: index, bytes per task (hash), bytes in all (string), the task's hash, its event stream,
 * the run leases set, then more keys to expire. ARGV: id, maxRetainedTasks, maxRetainedBytes,
 * TTL ms, key prefix. Returns the evicted ids.
 */
export const RETAIN_SCRIPT = `
redis.call('ZREM', KEYS[6], ARGV[1])
for i = 4, #KEYS do
  if i ~= 6 then redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local prefix = ARGV[5]
local function unfile(id)
  local bytes = tonumber(redis.call('HGET', KEYS[2], id) or '0') or 0
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('DECRBY', KEYS[3], bytes)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[4]), 'LIMIT', 0, ${EXPIRED_BATCH})) do
  unfile(id)
end
if redis.call('EXISTS', KEYS[4]) == 1 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local bytes = (redis.call('MEMORY', 'USAGE', KEYS[4], 'SAMPLES', 0) or 0) + (redis.call('MEMORY', 'USAGE', KEYS[5], 'SAMPLES', 0) or 0)
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], bytes)
  redis.call('INCRBY', KEYS[3], bytes)
end
local evicted = {}
while redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[2]) or (tonumber(redis.call('GET', KEYS[3]) or '0') or 0) > tonumber(ARGV[3]) do
  local id = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not id then break end
  local task = prefix .. 'task:' .. id
  local head = redis.call('HMGET', task, 'owner', 'contextId', 'claim')
  if head[1] then
    redis.call('ZREM', prefix .. 'owner:' .. head[1], id)
    if head[2] then redis.call('LREM', prefix .. 'context:' .. head[1] .. ':' .. head[2], 1, id) end
  end
  if head[3] and redis.call('GET', head[3]) == id then redis.call('DEL', head[3]) end
  -- UNLINK: a large event stream is freed by Redis's background thread, not while every client waits.
  redis.call('UNLINK', task, prefix .. 'events:' .. id, prefix .. 'followers:' .. id)
  unfile(id)
  evicted[#evicted + 1] = id
end
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('DEL', KEYS[3]) end
return evicted
`;

export interface RedisRetentionOptions {
  redis: Redis;
  /** The prefix of every key (the store's keyPrefix). */
  prefix: string;
  /** Finished tasks kept; past it the oldest finished is evicted first. */
  maxRetainedTasks: number;
  /** Bytes the finished tasks may hold in Redis; past it the oldest finished are evicted first. */
  maxRetainedBytes: number;
}

/**
 * maxRetainedTasks and maxRetainedBytes in Redis, for every instance on it: each finished task
 * is filed by the instance that wrote its end (RETAIN_SCRIPT), which evicts the oldest
 * finished tasks past either cap. Finished tasks also expire after taskTtlMs on their own.
 */
export class RedisRetention {
  private readonly retain: ScriptCall;

  constructor(private readonly options: RedisRetentionOptions) {
    this.retain = defineScript(options.redis, 'toolstreamRetain', RETAIN_SCRIPT);
  }

  /**
   * The task finished (its last event is stored): its keys expire after `ttlMs`, it leaves the
   * run leases (`leasesKey`), it is filed, and the oldest finished are evicted past the caps.
   * `alsoExpire`: the other keys that live as long as it. Resolves the evicted ids.
   */
  async finished(id: string, ttlMs: number, leasesKey: string, alsoExpire: string[] = []): Promise<string[]> {
    const { prefix, maxRetainedTasks, maxRetainedBytes } = this.options;
    return (await this.retain(
      6 + alsoExpire.length,
      this.indexKey,
      `${this.indexKey}:bytes`,
      `${this.indexKey}:total`,
      `${prefix}task:${id}`,
      `${prefix}events:${id}`,
      leasesKey,
      ...alsoExpire,
      id,
      maxRetainedTasks,
      maxRetainedBytes,
      ttlMs,
      prefix,
    )) as string[];
  }

  /** Finished tasks filed now, and the bytes they hold (what the caps count). */
  async retained(): Promise<{ tasks: number; bytes: number }> {
    const [[, tasks], [, bytes]] = (await this.options.redis.multi().zcard(this.indexKey).get(`${this.indexKey}:total`).exec()) as [[unknown, number], [unknown, string | null]];
    return { tasks, bytes: Number(bytes ?? 0) };
  }

  private get indexKey(): string {
    return `${this.options.prefix}finished:`;
  }
}

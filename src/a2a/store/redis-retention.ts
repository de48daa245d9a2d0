import type Redis from 'ioredis';
import { defineScript, type ScriptCall } from './redis-scripts';
import { RedisTurnWrites } from './redis-turn-writes';

/** Index entries past their TTL dropped per call at most (their keys expired on their own). */
const EXPIRED_BATCH = 1_000;

/** Finished tasks filed per script call at most: one call runs alone in Redis, so its length is bounded. */
export const RETAINED_PER_CALL = 32;

/**
 * Files finished tasks, in order, each as if by a call of its own (in the same millisecond): for
 * each, expires its keys (its hash, its event stream, then the other keys that live as long as
 * it) after the TTL and takes it out of the run leases, then files it in the index of finished
 * tasks (a sorted set by finish time, Redis's clock, with each task's bytes: Redis's MEMORY USAGE
 * of its hash and event stream), then evicts the oldest finished tasks while more than
 * maxRetainedTasks are filed or they hold more than maxRetainedBytes: their hash, event stream,
 * follower count, owner listing entry, conversation entry and message claim. Index entries older
 * than the TTL leave it first (their keys expired by themselves). One atomic step, so instances
 * filing at once never both overshoot. Key names are built here from the prefix (one Redis, not
 * a cluster, as for every other script). The tasks that end together (see RedisRetention.finished)
 * share one call: its clock read, the expired entries' sweep and the call itself, once; each is
 * filed a µs after the one before it, so that the oldest is evicted first among them too (ties in
 * the index's score sort by id).
 * KEYS: index, bytes per task (hash), bytes in all (string), the run leases set, then per task
 * its hash, its event stream and the other keys to expire. ARGV: maxRetainedTasks,
 * maxRetainedBytes, TTL ms, key prefix, then per task its id and how many keys it has (2 or more).
 * Returns the evicted ids.
 */
export const RETAIN_SCRIPT = `
local maxTasks = tonumber(ARGV[1])
local maxBytes = tonumber(ARGV[2])
local ttl = ARGV[3]
local prefix = ARGV[4]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function unfile(id)
  local bytes = tonumber(redis.call('HGET', KEYS[2], id) or '0') or 0
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('DECRBY', KEYS[3], bytes)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ttl), 'LIMIT', 0, ${EXPIRED_BATCH})) do
  unfile(id)
end
local evicted = {}
local filed = 0
local k = 5
for a = 5, #ARGV, 2 do
  local id = ARGV[a]
  local last = k + tonumber(ARGV[a + 1]) - 1
  redis.call('ZREM', KEYS[4], id)
  for i = k, last do redis.call('PEXPIRE', KEYS[i], ttl) end
  if redis.call('EXISTS', KEYS[k]) == 1 and not redis.call('ZSCORE', KEYS[1], id) then
    local bytes = (redis.call('MEMORY', 'USAGE', KEYS[k], 'SAMPLES', 0) or 0) + (redis.call('MEMORY', 'USAGE', KEYS[k + 1], 'SAMPLES', 0) or 0)
    -- Filed in order within the call too (ties sort by id): the n-th at now + n µs, written as text (Lua's %.14g would round it).
    redis.call('ZADD', KEYS[1], string.format('%d.%03d', now, filed), id)
    filed = filed + 1
    redis.call('HSET', KEYS[2], id, bytes)
    redis.call('INCRBY', KEYS[3], bytes)
  end
  k = last + 1
  while redis.call('ZCARD', KEYS[1]) > maxTasks or (tonumber(redis.call('GET', KEYS[3]) or '0') or 0) > maxBytes do
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
    if not oldest then break end
    local task = prefix .. 'task:' .. oldest
    local head = redis.call('HMGET', task, 'owner', 'contextId', 'claim')
    if head[1] then
      redis.call('ZREM', prefix .. 'owner:' .. head[1], oldest)
      if head[2] then redis.call('LREM', prefix .. 'context:' .. head[1] .. ':' .. head[2], 1, oldest) end
    end
    if head[3] and redis.call('GET', head[3]) == oldest then redis.call('DEL', head[3]) end
    -- UNLINK: a large event stream is freed by Redis's background thread, not while every client waits.
    redis.call('UNLINK', task, prefix .. 'events:' .. oldest, prefix .. 'followers:' .. oldest)
    unfile(oldest)
    evicted[#evicted + 1] = oldest
  end
end
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('DEL', KEYS[3]) end
return evicted
`;

/** A finished task waiting for its turn's call (see RedisRetention.finished). */
interface Finished {
  id: string;
  /** Its hash, its event stream, then the other keys that live as long as it. */
  keys: string[];
  resolve: (evicted: string[]) => void;
  reject: (err: unknown) => void;
}

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
  /** Tasks finished in this event-loop turn, by their TTL and run leases key (one call per pair, in practice one). */
  private readonly due = new Map<string, Finished[]>();
  /** A turn's calls (and whatever else is written meanwhile) leave in one write. */
  private readonly writes: RedisTurnWrites;

  constructor(private readonly options: RedisRetentionOptions) {
    this.retain = defineScript(options.redis, RETAIN_SCRIPT);
    this.writes = new RedisTurnWrites(options.redis);
  }

  /**
   * The task finished (its last event is stored): its keys expire after `ttlMs`, it leaves the
   * run leases (`leasesKey`), it is filed, and the oldest finished are evicted past the caps.
   * `alsoExpire`: the other keys that live as long as it. Resolves the ids evicted by its call.
   * The tasks that finish in one event-loop turn (a burst of runs ending together: their last
   * appends' acknowledgements arrive together) go in one call, RETAINED_PER_CALL at most, sent
   * after the turn's I/O callbacks: the appends that other tasks' frames wait for, made in
   * those callbacks, leave first, and Redis runs the call's clock read, sweep and dispatch once.
   */
  finished(id: string, ttlMs: number, leasesKey: string, alsoExpire: string[] = []): Promise<string[]> {
    const { prefix } = this.options;
    const group = `${ttlMs} ${leasesKey}`;
    return new Promise((resolve, reject) => {
      let tasks = this.due.get(group);
      if (!tasks) {
        this.due.set(group, (tasks = []));
        setImmediate(() => this.send(group, ttlMs, leasesKey));
      }
      tasks.push({ id, keys: [`${prefix}task:${id}`, `${prefix}events:${id}`, ...alsoExpire], resolve, reject });
    });
  }

  private send(group: string, ttlMs: number, leasesKey: string): void {
    const tasks = this.due.get(group) ?? [];
    this.due.delete(group);
    const { prefix, maxRetainedTasks, maxRetainedBytes } = this.options;
    this.writes.cork();
    for (let from = 0; from < tasks.length; from += RETAINED_PER_CALL) {
      const slice = tasks.slice(from, from + RETAINED_PER_CALL);
      const keys = [this.indexKey, `${this.indexKey}:bytes`, `${this.indexKey}:total`, leasesKey];
      const args: (string | number)[] = [maxRetainedTasks, maxRetainedBytes, ttlMs, prefix];
      for (const task of slice) {
        keys.push(...task.keys);
        args.push(task.id, task.keys.length);
      }
      this.retain(keys.length, ...keys, ...args).then(
        (evicted) => {
          for (const task of slice) task.resolve(evicted as string[]);
        },
        (err: unknown) => {
          for (const task of slice) task.reject(err);
        },
      );
    }
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

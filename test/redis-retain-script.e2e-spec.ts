import Redis from 'ioredis';
import { RedisRetention } from '../src/a2a/store/redis-retention';
import { redisForSuite } from './support/redis-suite';

const PREFIX = 'p:';
const TTL_MS = 60_000;

/** A finished task's keys as the store leaves them: hash (with owner, conversation, claim), stream, follower count, listing and conversation entries, claim, a run lease. */
async function finishedTask(redis: Redis, id: string): Promise<void> {
  await redis.hset(`${PREFIX}task:${id}`, { id, owner: 'o', contextId: `c-${id}`, claim: `${PREFIX}message:${id}`, snapshot: 'x'.repeat(300) });
  await redis.xadd(`${PREFIX}events:${id}`, '1-1', 'f', '-', 'j', '{"a":1}');
  await redis.set(`${PREFIX}followers:${id}`, '1');
  await redis.zadd(`${PREFIX}owner:o`, 1, id);
  await redis.rpush(`${PREFIX}context:o:c-${id}`, id);
  await redis.set(`${PREFIX}message:${id}`, id);
  await redis.zadd(`${PREFIX}leases`, Date.now() + 30_000, id);
}

/** Everything under the prefix, with each key's value and whether it expires: two Redis states compared whole. */
async function state(redis: Redis): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await redis.keys(`${PREFIX}*`)).sort()) {
    const type = await redis.type(key);
    const value =
      type === 'hash'
        ? await redis.hgetall(key)
        : type === 'zset'
          ? await redis.zrange(key, 0, -1)
          : type === 'list'
            ? await redis.lrange(key, 0, -1)
            : type === 'stream'
              ? await redis.xlen(key)
              : await redis.get(key);
    const ttl = await redis.pttl(key);
    out[key] = { type, value, expires: ttl > 0 };
  }
  return out;
}

describe('the end script (RETAIN_SCRIPT), on a real Redis (e2e)', () => {
  const suite = redisForSuite();
  beforeEach(() => suite.redis.flushall());

  const options = (): ConstructorParameters<typeof RedisRetention>[0] => ({ redis: suite.redis, prefix: PREFIX, maxRetainedTasks: 3, maxRetainedBytes: 1 << 30 });
  const more = (id: string): string[] => [`${PREFIX}message:${id}`, `${PREFIX}context:o:c-${id}`, `${PREFIX}owner:o`];

  it('files tasks that finish together with one call exactly as with one call each: expiry, leases, filing, evictions past maxRetainedTasks', async () => {
    // Ids in the order they finish, so that calls in one millisecond (whose scores tie and sort by id) keep it too.
    const ids = ['a1', 'a2', 'a3', 'a4', 'a5'];
    for (const id of ids) await finishedTask(suite.redis, id);
    const each = new RedisRetention(options());
    const evictedEach: string[] = [];
    for (const id of ids) evictedEach.push(...(await each.finished(id, TTL_MS, `${PREFIX}leases`, more(id))));
    const afterEach = await state(suite.redis);

    await suite.redis.flushall();
    for (const id of ids) await finishedTask(suite.redis, id);
    const together = new RedisRetention(options());
    // The script calls Redis ran (EVALSHA, or EVAL when it had to load it), by INFO commandstats.
    await suite.redis.config('RESETSTAT');
    const evicted = await Promise.all(ids.map((id) => together.finished(id, TTL_MS, `${PREFIX}leases`, more(id))));
    const stats = await suite.redis.info('commandstats');
    const scriptCalls = [...stats.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)].reduce((sum, [, , calls]) => sum + Number(calls), 0);

    expect(scriptCalls).toBe(1);
    expect(evicted[0]).toEqual(['a1', 'a2']);
    expect(evictedEach).toEqual(['a1', 'a2']);
    expect(await state(suite.redis)).toEqual(afterEach);
    // What both left: the newest three filed, the first two evicted whole, no run lease, the rest expiring.
    expect(await suite.redis.zrange(`${PREFIX}finished:`, 0, -1)).toEqual(['a3', 'a4', 'a5']);
    expect(await suite.redis.exists(`${PREFIX}task:a1`, `${PREFIX}events:a1`, `${PREFIX}followers:a1`, `${PREFIX}message:a1`, `${PREFIX}context:o:c-a1`)).toBe(0);
    expect(await suite.redis.zrange(`${PREFIX}owner:o`, 0, -1)).toEqual(['a3', 'a4', 'a5']);
    expect(await suite.redis.zcard(`${PREFIX}leases`)).toBe(0);
    for (const key of [`${PREFIX}task:a5`, `${PREFIX}events:a5`, `${PREFIX}message:a5`, `${PREFIX}context:o:c-a5`, `${PREFIX}owner:o`]) {
      expect(await suite.redis.pttl(key)).toBeGreaterThan(TTL_MS - 10_000);
    }
  });

  it('evicts the oldest first among the tasks of one call, whatever their ids', async () => {
    const ids = ['t5', 't1', 't4', 't2', 't3'];
    for (const id of ids) await finishedTask(suite.redis, id);
    const retention = new RedisRetention(options());
    const [evicted] = await Promise.all(ids.map((id) => retention.finished(id, TTL_MS, `${PREFIX}leases`, more(id))));
    expect(evicted).toEqual(['t5', 't1']);
    expect(await suite.redis.zrange(`${PREFIX}finished:`, 0, -1)).toEqual(['t4', 't2', 't3']);
  });
});

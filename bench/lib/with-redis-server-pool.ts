/**
 * The set-up of the Redis probe scripts: a redis-server of their own (free loopback port, temp
 * dir; its URL in BENCH_REDIS_URL, where toolstream-redis's servers read it), a client on it for
 * the script's INFO and CONFIG calls, and the targets' servers (lib/with-server-pool.ts); all
 * stopped once the measurement ends or throws.
 */
import Redis from 'ioredis';
import type { Target } from './ipc';
import { BenchRedis } from './redis';
import type { ServerPool } from './server-pool';
import { withServerPool } from './with-server-pool';

export interface RedisServerPool {
  pool: ServerPool;
  redis: BenchRedis;
  client: Redis;
}

export async function withRedisServerPool(targets: readonly Target[], serverFlags: string[], measure: (session: RedisServerPool) => Promise<void>): Promise<void> {
  const redis = await BenchRedis.start();
  if (!redis) throw new Error('redis-server is not installed');
  process.env.BENCH_REDIS_URL = redis.url;
  const client = new Redis(redis.url);
  try {
    await withServerPool(targets, { serverFlags, redis }, (pool) => measure({ pool, redis, client }));
  } finally {
    client.disconnect();
    await redis.stop();
  }
}

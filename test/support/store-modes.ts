import type { A2aRedisOptions } from '../../src/a2a';
import { startRedis, type TestRedis } from './redis-server';

/** The two task stores every contract suite runs against: the embedded one and Redis (role all). */
export type StoreMode = 'memory' | 'redis';
export const STORE_MODES: StoreMode[] = ['memory', 'redis'];

export interface StoreModeFixture {
  mode: StoreMode;
  /** A2aModule options for this mode: nothing in memory; in Redis, the suite's server under a key prefix of the app's own. */
  options(redis?: Partial<A2aRedisOptions>): { redis?: A2aRedisOptions };
  /** The suite's redis-server (Redis mode only, after beforeAll). */
  redis(): TestRedis;
  /** Stops the suite's redis-server (nothing in memory mode). */
  stop(): Promise<void>;
}

/**
 * The task store of a suite run in `mode`: in Redis mode a redis-server of its own (free loopback
 * port, temp dir, no persistence), started in a beforeAll registered here (call this before the
 * suite's own hooks). Jest runs a block's afterAll hooks in the order they were declared, so the
 * suite declares `afterAll(store.stop)` after its own afterAll: the server outlives every app it
 * closes. Each `options()` call gets its own key prefix, so two apps of one suite never take
 * each other's runs from the queue.
 */
export function useStoreMode(mode: StoreMode): StoreModeFixture {
  let server: TestRedis | undefined;
  let apps = 0;
  if (mode === 'redis') {
    beforeAll(async () => {
      server = await startRedis();
    });
  }
  return {
    mode,
    options: (redis = {}) => {
      if (mode === 'memory') return {};
      if (!server) throw new Error('the Redis server of the suite is not started yet (call options() inside a hook or test)');
      apps += 1;
      return { redis: { connection: server.url, keyPrefix: `e2e${apps}:`, ...redis } };
    },
    redis: () => {
      if (!server) throw new Error(`no Redis server in ${mode} mode`);
      return server;
    },
    stop: async () => {
      await server?.stop();
      server = undefined;
    },
  };
}

import Redis from 'ioredis';
import { startRedis, type TestRedis } from './redis-server';

/** A redis-server of a describe block's own and a client of it: started before its tests, stopped after them. */
export function redisForSuite(): { readonly server: TestRedis; readonly redis: Redis } {
  const suite = {} as { server: TestRedis; redis: Redis };
  beforeAll(async () => {
    suite.server = await startRedis();
    suite.redis = new Redis(suite.server.url);
  });
  afterAll(async () => {
    suite.redis.disconnect();
    await suite.server.stop();
  });
  return suite;
}

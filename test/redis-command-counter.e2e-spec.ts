import { RedisCommandCounter } from '../bench/lib/redis-monitor';
import { redisForSuite } from './support/redis-suite';

// The bench counts the commands its servers send to Redis through MONITOR (bench/lib/redis-monitor.ts).
describe("the bench's Redis command counter, on a real Redis (e2e)", () => {
  const suite = redisForSuite();

  it('counts client commands by name, and the commands scripts run apart', async () => {
    const counter = await RedisCommandCounter.start(suite.server.url, { scriptCommandsByName: true });
    await suite.redis.set('k', '1');
    await suite.redis.get('k');
    await suite.redis.eval("redis.call('TIME'); return redis.call('GET', KEYS[1])", 1, 'k');
    await suite.redis.ping(); // MONITOR lines arrive in order: once PING's is in, the others are too
    const taken = { client: 0, script: 0, byName: {} as Record<string, number> };
    await waitFor(() => {
      const { client, script, byName } = counter.take();
      taken.client += client;
      taken.script += script;
      for (const [name, n] of Object.entries(byName)) taken.byName[name] = (taken.byName[name] ?? 0) + n;
      return taken.byName.ping === 1;
    });
    expect(taken).toEqual({ client: 4, script: 2, byName: { set: 1, get: 1, eval: 1, ping: 1, 'lua:time': 1, 'lua:get': 1 } });
    counter.stop();
  });

  it('starts and stops while commands flow without an error escaping (a full bench run ended on one)', async () => {
    // MONITOR's first lines can come in the same read as its OK, before ioredis marks the
    // connection as monitoring: it takes them for replies to nothing and emits an error each.
    const escaped: unknown[] = [];
    const onUncaught = (error: unknown): void => void escaped.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      let pumping = true;
      const pump = (async () => {
        while (pumping) await Promise.all(Array.from({ length: 200 }, () => suite.redis.eval("return redis.call('TIME')", 0)));
      })();
      for (let round = 0; round < 20; round++) {
        const counter = await RedisCommandCounter.start(suite.server.url);
        let seen = 0;
        await waitFor(() => (seen += counter.take().client) > 100);
        counter.stop();
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      pumping = false;
      await pump;
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(escaped).toEqual([]);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error('timed out');
}

import type Redis from 'ioredis';
import { RedisTurnWrites } from './redis-turn-writes';

/** A connection as RedisTurnWrites uses it: ready, with a socket that records its corks. */
function connection(): { redis: Redis; log: string[] } {
  const log: string[] = [];
  const stream = { cork: () => log.push('cork'), uncork: () => log.push('uncork') };
  return { redis: { status: 'ready', stream } as unknown as Redis, log };
}

const microtasksDone = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('RedisTurnWrites', () => {
  it('runs the sends deferred in one piece of code together once it is done, each once and in order, turn after turn; one deferred while they run goes with the next', async () => {
    const { redis } = connection();
    const writes = new RedisTurnWrites(redis);
    const ran: string[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const before = ran.length;
      for (let i = 0; i < 3; i++) writes.defer(() => ran.push(`t${turn}.${i}`));
      writes.defer(() => {
        ran.push(`t${turn}.last`);
        writes.defer(() => ran.push(`t${turn}.next`));
      });
      expect(ran.length).toBe(before);
      await microtasksDone();
      expect(ran.slice(before)).toEqual([`t${turn}.0`, `t${turn}.1`, `t${turn}.2`, `t${turn}.last`, `t${turn}.next`]);
    }
  });

  it('runs the sends that wait for the gap together once it passed, each once, and a later one with the next timer', async () => {
    const { redis } = connection();
    const writes = new RedisTurnWrites(redis);
    const ran: number[] = [];
    for (let round = 0; round < 3; round++) {
      writes.later(() => ran.push(round * 10));
      writes.later(() => {
        ran.push(round * 10 + 1);
        writes.later(() => ran.push(round * 10 + 2));
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(ran).toEqual([0, 1, 2, 10, 11, 12, 20, 21, 22]);
  });

  it('corks the socket once until the promise callbacks queued so far are done, then uncorks it', async () => {
    const { redis, log } = connection();
    const writes = new RedisTurnWrites(redis);
    writes.cork();
    writes.cork();
    void Promise.resolve().then(() => log.push('callback'));
    expect(log).toEqual(['cork']);
    await microtasksDone();
    expect(log).toEqual(['cork', 'uncork', 'callback']);
    writes.cork();
    await microtasksDone();
    expect(log).toEqual(['cork', 'uncork', 'callback', 'cork', 'uncork']);
  });
});

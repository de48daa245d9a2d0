import type { Command, default as Redis } from 'ioredis';
import { RedisRetention, RETAINED_PER_CALL } from './redis-retention';

/** A command's arguments, read back from the RESP bytes it writes (`*<n>`, then `$<length>` and the bytes of each). */
function writtenArgs(command: Command): string[] {
  const text = (command.toWritable(undefined as never) as Buffer).toString();
  const args: string[] = [];
  let at = text.indexOf('\r\n') + 2;
  while (at < text.length) {
    const lineEnd = text.indexOf('\r\n', at);
    const length = Number(text.slice(at + 1, lineEnd));
    args.push(text.slice(lineEnd + 2, lineEnd + 2 + length));
    at = lineEnd + 2 + length + 2;
  }
  return args;
}

/** A connection as RedisRetention uses it: its script's EVALSHA calls the test answers; writes are corked around each turn's calls. */
function connection(answer: (keys: string[], args: string[]) => Promise<string[]>): { redis: Redis; calls: { keys: string[]; args: string[] }[]; corks: () => number } {
  const calls: { keys: string[]; args: string[] }[] = [];
  let corks = 0;
  const redis = {
    status: 'ready',
    stream: { cork: () => (corks += 1), uncork: () => undefined },
    sendCommand: (command: Command) => {
      // evalsha, the SHA1, the number of keys, then the keys and the arguments.
      const [, , numberOfKeys, ...keysThenArgs] = writtenArgs(command);
      const keys = keysThenArgs.slice(0, Number(numberOfKeys));
      const args = keysThenArgs.slice(Number(numberOfKeys));
      calls.push({ keys, args });
      answer(keys, args).then(
        (reply) => command.resolve(reply),
        (err: Error) => command.reject(err),
      );
      return command.promise;
    },
  };
  return { redis: redis as unknown as Redis, calls, corks: () => corks };
}

const options = { prefix: 'p:', maxRetainedTasks: 10, maxRetainedBytes: 1_000 };

describe('RedisRetention.finished', () => {
  it('files the tasks that finish in one turn with one script call (RETAINED_PER_CALL at most each), in order, after the turn, each with its own keys', async () => {
    const { redis, calls, corks } = connection(async (keys, args) => [`evicted-by-${args[4]}`]);
    const retention = new RedisRetention({ redis, ...options });
    const count = RETAINED_PER_CALL + 3;
    const done = Array.from({ length: count }, (_, i) => retention.finished(`t${i}`, 5_000, 'p:leases', i === 0 ? ['p:claim', 'p:owner:o'] : []));
    // Nothing leaves within the turn: the tasks that finish in it go together once it is done.
    expect(calls).toHaveLength(0);
    const evicted = await Promise.all(done);
    expect(calls).toHaveLength(2);
    expect(corks()).toBe(1);
    const [first, second] = calls;
    expect(first.keys.slice(0, 4)).toEqual(['p:finished:', 'p:finished::bytes', 'p:finished::total', 'p:leases']);
    expect(first.keys.slice(4, 10)).toEqual(['p:task:t0', 'p:events:t0', 'p:claim', 'p:owner:o', 'p:task:t1', 'p:events:t1']);
    expect(first.args.slice(0, 8)).toEqual(['10', '1000', '5000', 'p:', 't0', '4', 't1', '2']);
    expect(first.args).toHaveLength(4 + 2 * RETAINED_PER_CALL);
    expect(second.args.slice(4)).toEqual(['t32', '2', 't33', '2', 't34', '2']);
    expect(second.keys).toEqual(['p:finished:', 'p:finished::bytes', 'p:finished::total', 'p:leases', ...['t32', 't33', 't34'].flatMap((id) => [`p:task:${id}`, `p:events:${id}`])]);
    // Each task gets what its call evicted.
    expect(evicted[0]).toEqual(['evicted-by-t0']);
    expect(evicted[count - 1]).toEqual(['evicted-by-t32']);
    // A task that finishes in a later turn goes in a call of its own.
    await retention.finished('later', 5_000, 'p:leases');
    expect(calls).toHaveLength(3);
    expect(calls[2].args.slice(4)).toEqual(['later', '2']);
  });

  it('fails every task of a call that failed, and only those', async () => {
    const { redis } = connection(async (keys, args) => {
      if (args.includes('bad')) throw new Error('Redis is away');
      return [];
    });
    const retention = new RedisRetention({ redis, ...options });
    const together = [retention.finished('a', 5_000, 'p:leases'), retention.finished('bad', 5_000, 'p:leases')];
    await expect(together[0]).rejects.toThrow('Redis is away');
    await expect(together[1]).rejects.toThrow('Redis is away');
    await expect(retention.finished('c', 5_000, 'p:leases')).resolves.toEqual([]);
  });
});

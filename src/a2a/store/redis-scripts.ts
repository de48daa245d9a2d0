import type Redis from 'ioredis';

/** A script call: the number of keys, then the keys, then the arguments (as EVAL takes them). */
export type ScriptCall = (numberOfKeys: number, ...keysThenArgs: (string | number)[]) => Promise<unknown>;

/**
 * A Lua script called by its SHA1 (EVALSHA) on `redis`, through ioredis's defineCommand: the
 * script's text goes to Redis only when Redis does not have it yet (after a restart, ioredis
 * sends it again on its own), not with every call as EVAL does, and Redis does not hash it on
 * every call. Some scripts run once or twice per task (admission, queueing, take-over, the end).
 */
export function defineScript(redis: Redis, name: string, lua: string): ScriptCall {
  redis.defineCommand(name, { lua });
  return (numberOfKeys, ...keysThenArgs) => (redis as unknown as Record<string, ScriptCall>)[name](numberOfKeys, ...keysThenArgs);
}

/**
 * Tasks per call of a script that renews the leases or slots of every task an instance holds.
 * Such a script runs a few commands per task, and Redis runs nothing else meanwhile; the
 * instance's appends, which share its connection, wait behind it too (about 0.4-0.7 ms per 100
 * tasks, 3-8 ms at 1,000). In calls of this many, one after the other, what the instance sent
 * in between goes first.
 */
export const RENEWED_PER_CALL = 64;

/** Runs `renew` on `ids` in slices of RENEWED_PER_CALL, each once the one before has answered; resolves what they returned, in order. */
export async function inSlices<T>(ids: readonly string[], renew: (slice: string[]) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (let from = 0; from < ids.length; from += RENEWED_PER_CALL) all.push(...(await renew(ids.slice(from, from + RENEWED_PER_CALL))));
  return all;
}

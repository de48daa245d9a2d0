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

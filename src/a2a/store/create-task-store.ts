import Redis from 'ioredis';
import type { A2aConfig, ToolstreamRole } from '../a2a.module-definition';
import { InMemoryTaskStore } from './in-memory-task-store';
import { RedisTaskStore } from './redis-task-store';
import type { TaskStore } from './task-store';

/** The store the options ask for: Redis when `redis` is set, else in memory. */
export function createTaskStore(config: A2aConfig, role: ToolstreamRole = 'all'): TaskStore {
  if (!config.redis) {
    if (role !== 'all') throw new Error(`A2aModule role ${role} needs the redis option: api and worker processes share tasks and runs through Redis`);
    return new InMemoryTaskStore(config);
  }
  const { connection, keyPrefix } = config.redis;
  const owned = typeof connection === 'string';
  // A request must not wait long for a Redis that is down: one retry, and a time limit per command.
  const redis = owned ? new Redis(connection, { maxRetriesPerRequest: 1, commandTimeout: 5_000 }) : connection;
  // A running task's keys outlive its deadline, then expire: an instance that dies leaves nothing for good.
  return new RedisTaskStore({ ...config, redis, keyPrefix, ownsConnection: owned, runningTtlMs: config.runDeadlineMs + config.taskTtlMs });
}

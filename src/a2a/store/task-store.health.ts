import { Injectable } from '@nestjs/common';
import type { HealthIndicatorService } from '@nestjs/terminus';
import { ContributesHealth, type HealthContributor } from '../../health/health-contributor';
import { RedisTaskStore } from './redis-task-store';
import { TaskStore } from './task-store';

/** How long a readiness probe waits for Redis to answer PING. */
const PING_TIMEOUT_MS = 2_000;

/**
 * Readiness of the task store: in Redis mode, whether Redis answers PING in time (an instance
 * that cannot reach the shared store cannot serve tasks); in memory, always up.
 */
@Injectable()
@ContributesHealth('readiness')
export class TaskStoreHealth implements HealthContributor {
  constructor(private readonly store: TaskStore) {}

  async checkHealth(indicator: HealthIndicatorService) {
    const session = indicator.check('taskStore');
    if (!(this.store instanceof RedisTaskStore)) return session.up({ kind: 'memory' });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.store.redis.ping(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer to PING within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS))),
      ]);
      return session.up({ kind: 'redis' });
    } catch (err) {
      return session.down({ kind: 'redis', message: err instanceof Error ? err.message : String(err) });
    } finally {
      clearTimeout(timer);
    }
  }
}

import { describeWarmUp, warmUpEmptyTasks } from '../sections/empty-task';
import { benchConfig } from './config';
import type { Target } from './ipc';
import type { ServerPool } from './server-pool';

/**
 * Warms the targets' servers as the empty-task section of a full run does (its 12,000 empty
 * tasks each, the servers taking turns window by window) and prints each one's `warm-up` line.
 */
export async function warmUpEmptyTaskServers(pool: ServerPool, targets: readonly Target[]): Promise<void> {
  const warm = await warmUpEmptyTasks(benchConfig(false), pool, targets);
  for (const target of targets) {
    const done = warm[target];
    if (done) console.log(`warm-up ${describeWarmUp(target, done)}`);
  }
}

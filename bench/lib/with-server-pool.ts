/**
 * The set-up the probe scripts share with `npm run bench`: the servers and the load generator as
 * compiled JavaScript (lib/compile-children.ts), the load generator started, a pool of servers,
 * the targets' servers started and given the pool's warm-up; then the script's measurement; then
 * every process stopped, whether the measurement ended or threw.
 */
import { compileChildren } from './compile-children';
import type { Target } from './ipc';
import { LoadProcess, useCompiledChildren } from './processes';
import type { BenchRedis } from './redis';
import { ServerPool } from './server-pool';

/** Compiled once per process: a script that builds several pools (one per variant) compiles once. */
let compiled: string | undefined;

export interface ServerPoolOptions {
  /** More node flags for every server the pool starts (e.g. `--max-semi-space-size=4`). */
  serverFlags?: string[];
  /** The redis-server of toolstream-redis (lib/with-redis-server-pool.ts). */
  redis?: BenchRedis;
}

export async function withServerPool(targets: readonly Target[], { serverFlags = [], redis }: ServerPoolOptions, measure: (pool: ServerPool) => Promise<void>): Promise<void> {
  compiled ??= compileChildren();
  useCompiledChildren(compiled);
  const load = await LoadProcess.start();
  const pool = new ServerPool(load, redis, serverFlags);
  try {
    await pool.prepare(targets);
    await measure(pool);
  } finally {
    await pool.stopAll();
    await load.stop();
  }
}

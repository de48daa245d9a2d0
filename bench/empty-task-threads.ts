/**
 * `node -r ts-node/register/transpile-only bench/empty-task-threads.ts [reps] [tasks] [--prewarm=N]`
 *
 * The empty-task section's measurement (fresh compiled servers, warmed as the bench warms
 * them, each then warmed to steady state as the section does, full run's caps: batches of
 * empty tasks until its CPU per task stops falling; then `tasks` empty tasks one after
 * another, toolstream and the limit alternating) with
 * each server's CPU per task split by thread, read from /proc (Linux): the main thread (the
 * JavaScript, the GC's pauses) and the others (V8's optimising compiler, the GC's helpers,
 * libuv). `--prewarm=N` sends N more empty tasks to each server first, unmeasured. Figures are in µs per task; /proc counts in
 * 10 ms ticks, so take at least a few hundred tasks per repetition.
 */
import { loadavg } from 'node:os';
import type { Target } from './lib/ipc';
import { threadCpu } from './lib/proc-counts';
import { EMPTY_TASK } from './lib/scenario';
import { warmUpEmptyTaskServers } from './lib/warm-up-empty-task-servers';
import { withServerPool } from './lib/with-server-pool';

async function main(): Promise<void> {
  const [reps = 3, tasks = 300] = process.argv.slice(2).filter((a) => !a.startsWith('--')).map(Number);
  const prewarm = Number(process.argv.find((a) => a.startsWith('--prewarm='))?.slice('--prewarm='.length) ?? 0);
  const targets: Target[] = ['toolstream', 'limit'];
  await withServerPool(targets, {}, async (pool) => {
    // One server after the other (the prewarm, then the section's warm-up), not in turns.
    for (const target of targets) {
      if (prewarm > 0) await pool.run(target, prewarm, EMPTY_TASK, 300_000, 1);
      await warmUpEmptyTaskServers(pool, [target]);
    }
    for (let rep = 0; rep < reps; rep++) {
      const row: string[] = [];
      const total: number[] = [];
      for (const target of targets) {
        const pid = (await pool.server(target)).pid as number;
        const before = threadCpu(pid);
        const run = await pool.run(target, tasks, EMPTY_TASK, 120_000, 1);
        const after = threadCpu(pid);
        total.push(run.serverCpuUs / tasks);
        row.push(
          `${target} ${(run.serverCpuUs / tasks).toFixed(0)} µs (main thread ${((after.main - before.main) / tasks).toFixed(0)}, other threads ${((after.others - before.others) / tasks).toFixed(0)})`,
        );
      }
      console.log(`rep ${rep}: ${row.join('; ')}; ratio ${(total[0] / total[1]).toFixed(2)}; load average ${loadavg()[0].toFixed(1)}`);
    }
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);

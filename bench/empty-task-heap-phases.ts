/**
 * `node -r ts-node/register/transpile-only bench/empty-task-heap-phases.ts [runs] [tasks] [--target=toolstream]`
 *
 * One compiled server, warmed as the empty-task section warms it (10,000 empty tasks), then
 * `runs` runs of `tasks` empty tasks one after another, each printed with the server's CPU per
 * task (user and system), its minor page faults per task (/proc: the old generation taking new
 * pages), its scavenges and other GCs (count and summed pauses, from a PerformanceObserver in
 * the server) and its heap used at the end. It shows the phases of a server that keeps finished
 * tasks: after its store fills, the heap grows until a mark-compact, and runs read dearer while
 * it grows than right after one (docs/performance.md, "How the empty task is measured").
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { compileChildren } from './lib/compile-children';
import { benchConfig } from './lib/config';
import { LoadProcess, useCompiledChildren } from './lib/processes';
import { ServerPool } from './lib/server-pool';
import type { Scenario } from './lib/scenario';
import type { Target } from './lib/ipc';
import { describeWarmUp, warmUpEmptyTask } from './sections/empty-task';

const EMPTY: Scenario = { toolCalls: 0, intervalMs: 0, idle: false };

/** Minor page faults of a process so far (/proc/<pid>/stat, its 10th field). */
function minorFaults(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[7]);
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

async function main(): Promise<void> {
  const [runs = 20, tasks = 1200] = process.argv.slice(2).filter((a) => !a.startsWith('--')).map(Number);
  const target = (process.argv.find((a) => a.startsWith('--target='))?.slice('--target='.length) ?? 'toolstream') as Target;
  useCompiledChildren(compileChildren());
  const load = await LoadProcess.start();
  const pool = new ServerPool(load);
  try {
    await pool.prepare([target]);
    console.log(`warm-up ${describeWarmUp(target, await warmUpEmptyTask(benchConfig(false), pool, target))}`);
    const server = await pool.server(target);
    const pid = server.pid as number;
    for (let k = 0; k < runs; k++) {
      const faults = minorFaults(pid);
      const run = await pool.run(target, tasks, EMPTY, 120_000, 1, { watchGc: true });
      const faulted = minorFaults(pid) - faults;
      const heap = await server.memory(false);
      const gc = run.gc;
      const user = (run.counts?.serverUserUs ?? NaN) / tasks;
      const system = (run.counts?.serverSystemUs ?? NaN) / tasks;
      console.log(
        `run ${k + 1}: ${Math.round(run.serverCpuUs / tasks)} µs per task (user ${Math.round(user)}, system ${Math.round(system)}), ` +
          `${(faulted / tasks).toFixed(2)} minor faults per task, ` +
          `${gc?.scavenges.length ?? '?'} scavenges (${sum(gc?.scavenges ?? []).toFixed(1)} ms), ` +
          `${gc?.others.length ?? '?'} other GCs (${sum(gc?.others ?? []).toFixed(1)} ms), heap used ${(heap.heapUsed / 2 ** 20).toFixed(1)} MiB, load ${loadavg()[0].toFixed(1)}`,
      );
    }
  } finally {
    await pool.stopAll();
    await load.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

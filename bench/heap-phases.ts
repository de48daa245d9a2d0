/**
 * `node -r ts-node/register/transpile-only bench/heap-phases.ts [runs] [streams] [--calls=0] [--target=toolstream] [--server-flags=--flag,--flag] [--no-warm-up]`
 *
 * One compiled server, warmed as the empty-task section warms it (12,000 empty tasks; skipped
 * with --no-warm-up), then `runs` runs of `streams` tasks of `--calls` tool calls (0: empty
 * tasks, one at a time; else all streams at once, as the concurrency rows), each printed with
 * the server's CPU per task or per frame (user and system; its main thread's and its other
 * threads', read from /proc in 10 ms ticks), its minor page faults (the heap taking new pages),
 * its scavenges and other GCs (count and summed pauses, from a PerformanceObserver in the
 * server), its heap used at the end and what its old and large-object spaces grew by per task or
 * frame since the run before (garbage included until a mark-compact: what a task leaves for the
 * old generation, promoted or allocated there directly), and how busy the server and the load
 * generator were over the run's wall time. It shows the phases of a server that keeps finished
 * tasks: after its store fills, the heap grows until a mark-compact, and runs read dearer while
 * it grows than right after one (docs/performance.md, "How the empty task is measured").
 */
import { loadavg } from 'node:os';
import { countsPer, minorFaults, threadCpu } from './lib/proc-counts';
import type { MeasuredRun } from './lib/server-pool';
import { FRAMES_PER_TOOL_CALL, type Scenario } from './lib/scenario';
import type { Target } from './lib/ipc';
import { warmUpEmptyTaskServers } from './lib/warm-up-empty-task-servers';
import { withServerPool } from './lib/with-server-pool';

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

/**
 * How busy each side was: the server's and the load generator's CPU over the run's wall time, the
 * load generator's CPU per unit, and the server's waits per unit (voluntary switches of its main
 * thread: for a socket to drain, a timer, or nothing to do). A run whose frames/s falls while the
 * server's CPU per frame holds is one where the server waited.
 */
function busy(run: MeasuredRun, units: number): string {
  const c = run.counts;
  if (!c?.load) return 'busy ?';
  const wallUs = run.result.elapsedMs * 1000;
  const loadCpu = countsPer(c.load.before, c.load.after, 1);
  const loadUs = loadCpu.userUs + loadCpu.systemUs;
  const serverWaits = countsPer(c.server.before, c.server.after, units).voluntarySwitches;
  return (
    `server busy ${((100 * run.serverCpuUs) / wallUs).toFixed(0)} %, load generator busy ${((100 * loadUs) / wallUs).toFixed(0)} % ` +
    `(${(loadUs / units).toFixed(1)} µs per unit), server waits ${serverWaits.toFixed(2)} per unit`
  );
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string): string => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
  const [runs = 20, streams = 1200] = args.filter((a) => !a.startsWith('--')).map(Number);
  const toolCalls = Number(option('calls', '0'));
  const target = option('target', 'toolstream') as Target;
  const scenario: Scenario = { toolCalls, intervalMs: 0, idle: false };
  // Empty tasks one after another (the empty-task section); tool calls on all streams at once (the concurrency rows).
  const maxOpen = toolCalls === 0 ? 1 : undefined;
  // What a figure is per: a task for empty tasks, a frame otherwise.
  const units = toolCalls === 0 ? streams : streams * toolCalls * FRAMES_PER_TOOL_CALL;
  const unit = toolCalls === 0 ? 'task' : 'frame';
  // More node flags for the server, comma-separated (e.g. --server-flags=--no-allocation-site-pretenuring).
  const serverFlags = option('server-flags', '').split(',').filter(Boolean);
  await withServerPool([target], { serverFlags }, async (pool) => {
    if (!args.includes('--no-warm-up')) await warmUpEmptyTaskServers(pool, [target]);
    const server = await pool.server(target);
    const pid = server.pid as number;
    let previous: { old: number; large: number } | undefined;
    for (let k = 0; k < runs; k++) {
      const faults = minorFaults(pid);
      const threads = threadCpu(pid);
      const run = await pool.run(target, streams, scenario, 120_000, maxOpen, { watchGc: true });
      const faulted = minorFaults(pid) - faults;
      const after = threadCpu(pid);
      const heap = await server.memory(false);
      // After the run's own GC figures were taken (pool.run), so this takes no pause from them.
      const spaces = await server.gcPauses();
      const oldUsed = spaces.oldSpaceUsedBytes + spaces.largeObjectSpaceUsedBytes;
      const grew = (now: number, before: number | undefined): string => (before === undefined ? '?' : ((now - before) / units).toFixed(0));
      const growth = `${grew(spaces.oldSpaceUsedBytes, previous?.old)} + ${grew(spaces.largeObjectSpaceUsedBytes, previous?.large)} B more per ${unit}`;
      previous = { old: spaces.oldSpaceUsedBytes, large: spaces.largeObjectSpaceUsedBytes };
      const gc = run.gc;
      const per = (us: number): string => (us / units).toFixed(toolCalls === 0 ? 0 : 1);
      console.log(
        `run ${k + 1}: ${per(run.serverCpuUs)} µs per ${unit} (user ${per(run.counts?.serverUserUs ?? NaN)}, system ${per(run.counts?.serverSystemUs ?? NaN)}; ` +
          `main thread ${per(after.main - threads.main)}, others ${per(after.others - threads.others)}), ` +
          `${(faulted / units).toFixed(2)} minor faults per ${unit}, ` +
          `${gc?.scavenges.length ?? '?'} scavenges (${sum(gc?.scavenges ?? []).toFixed(1)} ms), ` +
          `${gc?.others.length ?? '?'} other GCs (${sum(gc?.others ?? []).toFixed(1)} ms), heap used ${(heap.heapUsed / 2 ** 20).toFixed(1)} MiB, ` +
          `old and large-object spaces ${(oldUsed / 2 ** 20).toFixed(1)} MiB (${growth}), ` +
          `${Math.round(run.result.frames / (run.result.elapsedMs / 1000))} frames/s, ${busy(run, units)}, load ${loadavg()[0].toFixed(1)}`,
      );
    }
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

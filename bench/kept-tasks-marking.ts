/**
 * `node --expose-gc -r ts-node/register/transpile-only bench/kept-tasks-marking.ts [tasks=5000] [calls=100] [gcs=9]`
 *
 * What a full GC costs with `tasks` finished tasks kept by the in-memory store (`calls` tool
 * calls each, a started and a completed frame per call, then the answer; each held and
 * followed while it runs, as its stream does), against the same process with none: `gcs` full
 * GCs (`gc()`) in each state, the process's CPU time (every thread: V8's helpers mark too) and
 * wall time of each, min / median / max. A mark-compact's marking follows the live objects and
 * their references, which kept tasks are most of on a server that has served 1,000-stream rows
 * (bench/kept-tasks-objects.ts counts them). Times move with the machine's load: compare two
 * checkouts run one after the other, alternating.
 */
import { keepingStore, runKeptTask } from './lib/kept-tasks';

const TASKS = Number(process.argv[2] ?? 5_000);
const CALLS = Number(process.argv[3] ?? 100);
const GCS = Number(process.argv[4] ?? 9);

function fullGcs(): { cpuMs: number[]; wallMs: number[] } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  const cpuMs: number[] = [];
  const wallMs: number[] = [];
  for (let i = 0; i < GCS; i++) {
    const cpu = process.cpuUsage();
    const wall = process.hrtime.bigint();
    gc();
    const used = process.cpuUsage(cpu);
    wallMs.push(Number(process.hrtime.bigint() - wall) / 1e6);
    cpuMs.push((used.user + used.system) / 1e3);
  }
  return { cpuMs, wallMs };
}

const spread = (values: number[]): string => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[0].toFixed(1)} / ${sorted[sorted.length >> 1].toFixed(1)} / ${sorted[sorted.length - 1].toFixed(1)}`;
};

async function main(): Promise<void> {
  const store = keepingStore(TASKS);
  const runOne = (id: string, contextId: string): Promise<void> => runKeptTask(store, id, contextId, CALLS);
  const none = fullGcs();
  for (let i = 0; i < TASKS; i++) await runOne(`t${i}`, `c${i}`);
  const kept = fullGcs();
  const heap = process.memoryUsage().heapUsed / 1024 / 1024;
  console.log(`kept-tasks-marking: ${TASKS} kept tasks of ${CALLS} calls, heap used ${heap.toFixed(1)} MiB; full GC, CPU ms (every thread) min / median / max:`);
  console.log(`  none kept ${spread(none.cpuMs)} (wall ${spread(none.wallMs)}); kept ${spread(kept.cpuMs)} (wall ${spread(kept.wallMs)})`);
  await store.close();
}

void main();

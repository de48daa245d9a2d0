/**
 * `node -r ts-node/register/transpile-only bench/young-alloc.ts [batches=60] [--batch=100] [--target=limit|floor] [--warm=N]`
 *
 * Bytes an empty task allocates in the young generation, exactly (not sampled): the server runs in
 * this process as bench/empty-task-gc.ts runs it (compiled the same way: add this file to
 * bench/tsconfig.children.json's files in a scratch copy), and after the warm-up (12,000 tasks by
 * default, past the store's 10,000 kept) empty tasks go in batches of `--batch`, one after another;
 * the young generation's bytes in use are read before and after each batch, and a batch that no
 * GC fell in (V8's `gc` performance entries) gives its growth per task. Prints min / median / max
 * over those batches. Every batch also pays this process's own bookkeeping of it (one job sent to
 * the load generator and its result back), the same in every server and version: compare two
 * versions of one server, or servers, at the same `--batch`. A count the machine's load does not
 * move; a sampling heap profile (`--heap-sample-all` of empty-task-gc.ts) says where the bytes go,
 * within a few hundred bytes per task.
 */
import { loadavg } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { startInProcessServer } from './lib/in-process-server';
import { spread } from './lib/stats';

function youngUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space' || space.space_name === 'new_large_object_space') used += space.space_used_size;
  return used;
}

async function main(): Promise<void> {
  const batches = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 60);
  const option = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const target = option('target') ?? 'toolstream';
  const batch = Number(option('batch') ?? 100);
  let gcs = 0;
  const observer = new PerformanceObserver((list) => (gcs += list.getEntries().length));
  observer.observe({ entryTypes: ['gc'] });
  const server = await startInProcessServer(target);
  try {
    await server.emptyTasks(Number(option('warm') ?? 12_000));
    const perTask: number[] = [];
    for (let i = 0; i < batches; i++) {
      // GC entries arrive on a later turn: let those of the batch before land first.
      await new Promise((resolve) => setImmediate(resolve));
      const gcsBefore = gcs;
      const before = youngUsed();
      await server.emptyTasks(batch);
      const after = youngUsed();
      await new Promise((resolve) => setImmediate(resolve));
      if (gcs === gcsBefore && after >= before) perTask.push((after - before) / batch);
    }
    if (perTask.length === 0) throw new Error('every batch had a GC: use a smaller --batch');
    const s = spread(perTask);
    console.log(
      `${target}: young bytes per empty task ${s.min.toFixed(0)} / ${s.median.toFixed(0)} / ${s.max.toFixed(0)} (min / median / max over ${perTask.length} of ${batches} batches of ${batch} without a GC); load average ${loadavg()[0].toFixed(1)}`,
    );
  } finally {
    observer.disconnect();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

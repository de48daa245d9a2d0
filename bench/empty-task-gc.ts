/**
 * `node -r ts-node/register/transpile-only bench/empty-task-gc.ts [tasks] [--target=limit|floor] [--cpu-prof=FILE] [--heap-sample[-all]=FILE] [--warm=N] [--perf=FILE[,g]]`
 *
 * Where an empty task's garbage goes: toolstream's server (the benchmark's, as
 * bench/servers/toolstream-server.ts builds it) or the limit runs in this process, the load
 * generator in its own, and empty tasks go one after another (as in the empty-task section).
 * After a warm-up it prints the server's CPU per task (this process: the server alone) and the
 * garbage collector's pauses by kind, as counts and µs per task. Under ts-node this process also
 * loads node:domain (through ts-node's repl), which the benchmark's compiled servers do not:
 * compare toolstream and the limit run the same way, not these figures with the benchmark's.
 * Compiled (tsc, bench/tsconfig.children.json plus this file), it runs without ts-node, its
 * load generator compiled beside it; `node --trace-gc-nvp` then gives the bytes each scavenge
 * promotes, a count the machine's load does not move. `--cpu-prof` writes a CPU profile of the
 * measured tasks (sampled every 100 µs), `--heap-sample` V8's sampling heap profile of them,
 * counting only what survived a scavenge (objects a scavenge collects are left out, as is
 * everything allocated before; two scavenges just before it stops take out what was still young
 * and dead there): where the promoted bytes were allocated; `--heap-sample-all`
 * counts every allocation. `--warm=N` changes the warm-up's 12,000 tasks. Instructions per task,
 * which the machine's load does not move (the server's user space only, its helper threads
 * included; no kernel time): the compiled script under `valgrind --tool=cachegrind
 * --cache-sim=no --cachegrind-out-file=/dev/null node …/empty-task-gc.js 1000 --warm=4000` and
 * again with 3000 tasks; the difference of the two `I refs` over 2,000. `--perf=FILE` samples
 * this process with Linux perf over the measured tasks (every thread, kernel time included;
 * `--perf=FILE,g` with call chains; run node with `--perf-basic-prof` for JavaScript names), and
 * `bench/perf-split.ts FILE <tasks>` says where the CPU went.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { youngCollector } from './lib/collect-young';
import { watchGcPauses } from './lib/gc-pauses';
import { startInProcessServer } from './lib/in-process-server';
import { startPerfRecordOption } from './lib/perf-record';
import { inspectorPost } from './lib/inspector-post';

async function main(): Promise<void> {
  const tasks = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 5_000);
  const option = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const target = option('target') ?? 'toolstream';
  const profile = await profiler(option('cpu-prof'), option('heap-sample') ?? option('heap-sample-all'), option('heap-sample-all') !== undefined);
  const server = await startInProcessServer(target);
  try {
    // Warm-up past the in-memory store's 10,000 retained tasks, so the measured tasks evict as many;
    // the same for every server, as in the empty-task section (CPU per task falls for thousands).
    await server.emptyTasks(Number(option('warm') ?? 12_000));
    // A mark for reading --trace-gc-nvp's lines of the measured tasks only.
    console.log(`${target}: warm, measuring ${tasks} tasks`);
    await profile?.start();
    const perf = await startPerfRecordOption(option('perf'));
    const gcWatch = watchGcPauses();
    const cpu = process.cpuUsage();
    await server.emptyTasks(tasks);
    const used = process.cpuUsage(cpu);
    await perf?.stop();
    await profile?.stop();
    const pauses = await gcWatch.stop(100);
    const gc = [...pauses].map(([kind, { count, ms }]) => `${kind} ${count}× ${((ms * 1000) / tasks).toFixed(1)} µs/task`).join(', ');
    console.log(`${target}: ${((used.user + used.system) / tasks).toFixed(0)} µs of CPU per empty task (user ${(used.user / tasks).toFixed(0)}, system ${(used.system / tasks).toFixed(0)}); GC pauses ${gc}; load average ${loadavg()[0].toFixed(1)}`);
  } finally {
    await server.stop();
  }
}

/** The inspector's CPU profiler or sampling heap profiler around the measured tasks, when asked for. */
async function profiler(cpuFile?: string, heapFile?: string, allAllocations = false): Promise<{ start: () => Promise<void>; stop: () => Promise<void> } | undefined> {
  if (!cpuFile && !heapFile) return undefined;
  const collectYoung = heapFile && !allAllocations ? youngCollector() : undefined;
  const session = new Session();
  session.connect();
  const post = <T = unknown>(method: string, params?: object): Promise<T> => inspectorPost<T>(session, method, params);
  return {
    start: async () => {
      if (cpuFile) {
        await post('Profiler.enable');
        await post('Profiler.setSamplingInterval', { interval: 100 });
        await post('Profiler.start');
      }
      if (heapFile) await post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: allAllocations });
    },
    stop: async () => {
      if (cpuFile) writeFileSync(cpuFile, JSON.stringify((await post<{ profile: object }>('Profiler.stop')).profile));
      collectYoung?.();
      if (heapFile) writeFileSync(heapFile, JSON.stringify((await post<{ profile: object }>('HeapProfiler.stopSampling')).profile));
      session.disconnect();
    },
  };
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);

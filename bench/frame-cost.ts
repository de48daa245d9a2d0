/**
 * `node -r ts-node/register/transpile-only bench/frame-cost.ts <streams> <toolCalls> [reps=3] [--target=limit] [--open=<n>] [--gc-counts] [--heap] [--perf=FILE[,g]]`
 *
 * The per-frame cost of the streaming path, in-process: the server (toolstream's, as
 * bench/servers/toolstream-server.ts builds it, or the limit) runs in this process, the load
 * generator in its own; after a warm-up, each repetition runs `streams` streams of `toolCalls`
 * calls and prints the server's user and system CPU per frame and its GC pauses. `--open=<n>`
 * keeps at most n of the streams open at once (a new one opens as one ends): the same tasks and
 * frames at a lower concurrency, e.g. `1000 100 --open=1` against `1000 100` separates what
 * concurrency costs per frame from what the tasks cost. Counts that do
 * not move with the machine's load, for A/B runs on a busy machine:
 * - `--gc-counts` runs it again under `node --trace-gc-nvp` and adds, per repetition, the bytes
 *   the young-generation GC promoted and the bytes allocated, per frame, and the scavenges;
 * - `--heap` adds V8's sampling heap profile of the repetition: bytes allocated per frame, by
 *   function (inlined functions count as their caller; `node --no-turbo-inlining` splits them);
 * - `--perf=FILE` samples this process with Linux perf over the repetitions (every thread, kernel
 *   time included; `--perf=FILE,g` with call chains; run node with `--perf-basic-prof` for
 *   JavaScript names); `bench/perf-split.ts FILE <frames>` says where the CPU went.
 * Under ts-node, compare toolstream and the limit (or two checkouts) run the same way, not these
 * figures with the benchmark's compiled servers.
 */
import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { watchGcPauses } from './lib/gc-pauses';
import { startPerfRecordOption } from './lib/perf-record';
import { LoadProcess } from './lib/processes';
import { inspectorPost as post } from './lib/inspector-post';

const RESULT = 'frame-cost:';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

async function serve(target: string): Promise<{ server: Server; rpcPath: string }> {
  if (target === 'limit') return { server: (await import('./servers/limit-server')).createLimitServer(), rpcPath: '/' };
  return (await import('./servers/toolstream-server')).createToolstreamServer();
}

/** Allocation by function from a sampling heap profile, per frame. */
function allocationLines(head: ProfileNode, frames: number): string {
  const by = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`;
    by.set(key, (by.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
    node.children.forEach(walk);
  };
  walk(head);
  const top = [...by].sort((a, b) => b[1] - a[1]).slice(0, 25);
  return `\n  allocated ${(total / frames).toFixed(0)} B per frame (sampled); by function:\n${top.map(([k, v]) => `    ${(v / frames).toFixed(0).padStart(6)} B  ${k}`).join('\n')}`;
}

async function measure(streams: number, toolCalls: number, reps: number, target: string, heap: boolean, maxOpen?: number, perfOption?: string): Promise<void> {
  const { server, rpcPath } = await serve(target);
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${rpcPath}`;
  const load = await LoadProcess.start();
  const scenario = { toolCalls, intervalMs: 0, idle: false };
  const session = new Session();
  session.connect();
  try {
    await load.run({ url, streams, scenario, timeLimitMs: 300_000 });
    // The warm-up's GC lines end here (see --gc-counts).
    console.log(`${RESULT} warm-up done`);
    const perf = await startPerfRecordOption(perfOption);
    for (let rep = 0; rep < reps; rep++) {
      const gcWatch = watchGcPauses();
      if (heap) await post(session, 'HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      const cpu = process.cpuUsage();
      const result = await load.run({ url, streams, maxOpen, scenario, timeLimitMs: 300_000 });
      const used = process.cpuUsage(cpu);
      const allocation = heap ? allocationLines((await post<{ profile: { head: ProfileNode } }>(session, 'HeapProfiler.stopSampling')).profile.head, result.frames) : '';
      const pauses = await gcWatch.stop(50);
      if (result.completed !== streams) throw new Error(`${streams - result.completed} streams did not complete: ${result.errors.slice(0, 3).join('; ')}`);
      const gc = [...pauses].map(([kind, { count, ms }]) => `${kind} ${count}× ${((ms * 1000) / result.frames).toFixed(2)} µs`).join(', ');
      console.log(
        `${RESULT} ${result.frames} frames: ${target} ${streams} × ${toolCalls}${maxOpen ? ` (${maxOpen} open at a time)` : ''}: CPU per frame ${(used.user / result.frames).toFixed(2)} µs user + ${(used.system / result.frames).toFixed(2)} µs system, ` +
          `${result.framesPerSec.toFixed(0)} frames/s; GC pauses per frame: ${gc}; load average ${loadavg()[0].toFixed(1)}${allocation}`,
      );
    }
    await perf?.stop();
  } finally {
    session.disconnect();
    await load.stop();
    server.close();
  }
}

/** Runs this script again under --trace-gc-nvp and sums each repetition's scavenges. */
async function withGcCounts(args: string[]): Promise<void> {
  const child = spawn(process.execPath, ['--trace-gc-nvp', ...process.execArgv, __filename, ...args.filter((a) => a !== '--gc-counts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let promoted = 0;
  let allocated = 0;
  let scavenges = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.includes(' gc=s ')) {
      promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
      allocated += Number(/ allocated=(\d+)/.exec(line)?.[1] ?? 0);
      scavenges += 1;
    } else if (line.startsWith(RESULT)) {
      const frames = Number(/^frame-cost: (\d+) frames/.exec(line)?.[1] ?? 0);
      if (frames > 0) {
        console.log(`${line.slice(RESULT.length + 1)}\n  young generation: ${scavenges} scavenges, ${(promoted / frames).toFixed(0)} B promoted and ${(allocated / frames).toFixed(0)} B allocated per frame`);
      }
      promoted = allocated = scavenges = 0;
    }
  }
  await new Promise((resolve) => child.once('close', resolve));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--gc-counts')) return withGcCounts(args);
  const [streams, toolCalls, reps = 3] = args.filter((a) => !a.startsWith('--')).map(Number);
  if (!(streams > 0 && toolCalls > 0 && reps > 0)) throw new Error('usage: bench/frame-cost.ts <streams> <toolCalls> [reps] [--target=limit] [--open=<n>] [--gc-counts] [--heap] [--perf=FILE[,g]]');
  const target = args.find((a) => a.startsWith('--target='))?.slice('--target='.length) ?? 'toolstream';
  const open = args.find((a) => a.startsWith('--open='));
  const maxOpen = open ? Number(open.slice('--open='.length)) : undefined;
  if (maxOpen !== undefined && !(maxOpen > 0)) throw new Error('--open=<n> needs a positive number');
  await measure(streams, toolCalls, reps, target, args.includes('--heap'), maxOpen, args.find((a) => a.startsWith('--perf='))?.slice('--perf='.length));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);

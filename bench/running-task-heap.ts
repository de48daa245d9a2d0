/**
 * `node -r ts-node/register/transpile-only bench/running-task-heap.ts [streams=100] [--targets=toolstream,toolstream-redis] [--scenarios=idle,paced] [--at=2500[,ms...]] [--dir=<dir>]`
 *
 * What one RUNNING task holds in a compiled server's heap. One fresh server per target (warmed
 * with a few hundred tasks first) runs under `--heapsnapshot-signal`. For each scenario: a
 * snapshot between runs (its baseline), then one while `streams` tasks run. `idle`: each task
 * has published one `started` frame and waits (one tool open, none finished). `paced`: the
 * Redis rows' scenario (a call every 50 ms), a snapshot `--at` ms after the streams were asked
 * for (a list: one at each; ~48 finished tools per task at 2,500 ms, their frames kept for
 * snapshots and replay). What the running snapshot holds beyond the baseline (objects by id: V8
 * keeps an object's id across the snapshots of one process) is the running tasks', their
 * sockets, requests and streams included, printed per running run (the runtime's new Run
 * objects: at 1,000 paced streams not all have started by `--at`) by bench/lib/heap-snapshot.ts,
 * which also re-reads a pair alone. A snapshot follows a full GC: what counts is alive, no
 * in-flight garbage; and the counts do not move with the machine's load. A snapshot stops the
 * server for seconds (in Redis mode some commands then time out: the run says so).
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { compileChildren } from './lib/compile-children';
import { reportGrowth } from './lib/heap-snapshot';
import type { Target } from './lib/ipc';
import { LoadProcess, ServerProcess, useCompiledChildren } from './lib/processes';
import { BenchRedis } from './lib/redis';
import type { Scenario } from './lib/scenario';

function option(args: string[], name: string, fallback: string): string {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

/** Signals the server to write a snapshot into `dir` and waits until the file is whole (its size stops moving and the server answers again). */
async function snapshot(server: ServerProcess, dir: string, label: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(server.pid as number, 'SIGUSR2');
  for (;;) {
    await sleep(500);
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (!file) continue;
    const path = join(dir, file);
    const size = statSync(path).size;
    await server.memory(false);
    await sleep(500);
    if (size > 0 && statSync(path).size === size) {
      console.log(`  snapshot ${label}: ${path} (${(size / 1e6).toFixed(1)} MB)`);
      return path;
    }
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [streams = 100] = args.filter((a) => !a.startsWith('--')).map(Number);
  const targets = option(args, 'targets', 'toolstream,toolstream-redis').split(',') as Target[];
  const scenarios = option(args, 'scenarios', 'idle,paced').split(',');
  const atMs = option(args, 'at', '2500').split(',').map(Number);
  const dir = option(args, 'dir', join(__dirname, '.work', 'running-task-heap'));
  useCompiledChildren(compileChildren());
  const redis = targets.includes('toolstream-redis') ? await BenchRedis.start() : undefined;
  if (redis) process.env.BENCH_REDIS_URL = redis.url;
  const load = await LoadProcess.start();
  try {
    for (const target of targets) {
      const snapDir = join(dir, `${target}-${streams}`);
      mkdirSync(snapDir, { recursive: true });
      const server = await ServerProcess.start(target, {}, [`--heapsnapshot-signal=SIGUSR2`, `--diagnostic-dir=${snapDir}`]);
      try {
        const url = server.url;
        // Warm: the code paths and the lazily made singletons of every scenario, and some finished tasks kept.
        await load.run({ url, streams: 200, scenario: { toolCalls: 10, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
        await load.openIdle({ url, streams: 100, scenario: { toolCalls: 1, intervalMs: 0, idle: true }, timeLimitMs: 60_000 });
        await load.closeAll();
        await load.run({ url, streams: 100, scenario: { toolCalls: 20, intervalMs: 50, idle: false }, timeLimitMs: 60_000 });
        await sleep(1000);
        for (const name of scenarios) {
          console.log(`${target}, ${streams} running tasks, scenario ${name} (${new Date().toISOString()})`);
          const base = await snapshot(server, snapDir, `${name} before`);
          let running: string;
          const reportLater: [string, string][] = [];
          if (name === 'idle') {
            const scenario: Scenario = { toolCalls: 1, intervalMs: 0, idle: true };
            const opened = await load.openIdle({ url, streams, scenario, timeLimitMs: 120_000 });
            if (opened.failed) throw new Error(`idle streams failed: ${opened.errors.join('; ')}`);
            await sleep(500);
            running = await snapshot(server, snapDir, `${name} running`);
            await load.closeAll();
          } else {
            const scenario: Scenario = { toolCalls: 100, intervalMs: 50, idle: false };
            const run = load.run({ url, streams, scenario, timeLimitMs: 300_000 });
            const asked = Date.now();
            running = '';
            for (const [i, at] of atMs.entries()) {
              await sleep(Math.max(0, at - (Date.now() - asked)));
              if (running) reportLater.push([running, `${target} ${name} at ${atMs[i - 1]} ms`]);
              running = await snapshot(server, snapDir, `${name} running at ${at} ms`);
            }
            const result = await run;
            // A snapshot stops the server for seconds: in Redis mode its commands may time out then.
            if (result.failed || result.cut) console.log(`  (paced streams: ${result.failed} failed, ${result.cut} cut: ${result.errors[0] ?? ''})`);
          }
          await sleep(1000);
          for (const [file, label] of reportLater) reportGrowth(base, file, streams, label);
          reportGrowth(base, running, streams, `${target} ${name}${name === 'paced' && atMs.length > 1 ? ` at ${atMs[atMs.length - 1]} ms` : ''}`);
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    await load.stop();
    await redis?.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

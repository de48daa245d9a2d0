/**
 * `node -r ts-node/register/transpile-only bench/paced-tail.ts [toolCalls=100] [reps=3] [prefill=200x100] [targets=toolstream-redis]`
 *
 * What the slowest 1 % of the Redis paced row's frames waited for. The row of
 * bench/paced-latency.ts (100 paced streams, a tool call every 50 ms each, toolstream-redis on a
 * redis-server of its own, the warm-up again before each repetition, after a prefill of finished
 * tasks), with bench/paced-tail-probe.ts preloaded in the server: per repetition it prints the
 * server-side latency of each frame (its publish time to its response.write, which is most of
 * the publish-to-client latency the bench reports, without the load's side), and for the frames
 * at or over that latency's p99: how many had a GC pause inside their window and how much of it,
 * how many fell in an event-loop turn that kept a 1 ms timer over 2 ms late, and in those late
 * turns how much the process computed (CPU of every thread) against how long its main thread
 * waited for a CPU (/proc/self/schedstat run delay), what share of their latency the snapshot
 * builds took, and which other Redis commands (script calls named) were on their way meanwhile.
 * Also the append calls' round trips (send to reply seen) and, from /proc, how long the server's, Redis's and the load's threads waited for a CPU
 * during the repetition, and the CPU each of the three used per frame. Comma-separated targets
 * take turns (`toolstream-redis,toolstream`: the in-memory store at the same load, whose frames
 * are written in the callback that published them). The probe's 1 ms timer and stamps cost the server a little CPU: compare
 * its figures with each other, not with paced-latency.ts's.
 */
import { createHash } from 'node:crypto';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { transpileModule, ModuleKind, ScriptTarget } from 'typescript';
import type { Target } from './lib/ipc';
import { compileChildren } from './lib/compile-children';
import { LoadProcess, useCompiledChildren } from './lib/processes';
import { BenchRedis } from './lib/redis';
import { nowUs } from './lib/scenario';
import { cpuUsageOf, procCounts, runQueueWaitUs } from './lib/proc-counts';
import { redisCpu } from './lib/redis-command-times';
import { ServerPool } from './lib/server-pool';
import { ADMIT_LIVE_SCRIPT, RENEW_LIVE_SCRIPT } from '../src/a2a/store/redis-live-limits';
import { RETAIN_SCRIPT } from '../src/a2a/store/redis-retention';
import { APPEND_SCRIPT } from '../src/a2a/store/redis-task-appender';
import * as runQueueScripts from '../src/a2a/store/run-queue-scripts';

/** The store's scripts by SHA1, to name the EVALSHAs the probe saw. */
const SCRIPTS = new Map(
  Object.entries({ APPEND_SCRIPT, ADMIT_LIVE_SCRIPT, RENEW_LIVE_SCRIPT, RETAIN_SCRIPT, ...runQueueScripts })
    .filter((entry): entry is [string, string] => entry[0].endsWith('_SCRIPT') && typeof entry[1] === 'string')
    .map(([name, lua]) => [createHash('sha1').update(lua).digest('hex'), name]),
);

interface Probe {
  frames: number[];
  gcs: number[];
  calls: number[];
  kinds: string[];
  lates: number[];
  snapshots: number[];
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** µs of [from, to) covered by the intervals. */
function covered(from: number, to: number, intervals: readonly (readonly [number, number])[]): number {
  let us = 0;
  for (const [start, end] of intervals) if (end > from && start < to) us += Math.min(to, end) - Math.max(from, start);
  return us;
}

const ms = (us: number): string => (us / 1000).toFixed(2);

interface Window {
  target: Target;
  rep: number;
  from: number;
  to: number;
  load: number;
  waits: { server: number; redis: number; load: number };
  /** CPU per frame (µs, every thread, from clock ticks). */
  cpu: { server: number; redis: number; load: number };
  /** Redis's user and system CPU per frame (INFO cpu), and its time in EVALSHA per call (INFO commandstats, wall clock). */
  redis: { user: number; system: number; evalshaUsPerCall: number };
}

/** The commands other than appends that were on their way during some slow frame's window, by kind. */
function busyCommands(others: readonly { start: number; end: number; kind: number }[], slow: readonly [number, number][], kindName: (code: number) => string): string {
  const byKind = new Map<string, { count: number; longest: number }>();
  for (const call of others) {
    if (!slow.some(([published, written]) => call.end > published && call.start < written)) continue;
    const name = kindName(call.kind);
    const seen = byKind.get(name) ?? { count: 0, longest: 0 };
    seen.count += 1;
    seen.longest = Math.max(seen.longest, call.end - call.start);
    byKind.set(name, seen);
  }
  return [...byKind]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([name, { count, longest }]) => `${name} ${count} (${ms(longest)} ms)`)
    .join(', ');
}

function report(probe: Probe, window: Window): string {
  const frames: [number, number][] = [];
  for (let i = 0; i < probe.frames.length; i += 2) if (probe.frames[i] >= window.from && probe.frames[i] < window.to) frames.push([probe.frames[i], probe.frames[i + 1]]);
  const within = (start: number, end: number): boolean => end > window.from && start < window.to;
  const gcs: [number, number][] = [];
  for (let i = 0; i < probe.gcs.length; i += 3) if (within(probe.gcs[i], probe.gcs[i] + probe.gcs[i + 1])) gcs.push([probe.gcs[i], probe.gcs[i] + probe.gcs[i + 1]]);
  const lates: { span: [number, number]; cpu: number; waited: number }[] = [];
  for (let i = 0; i < probe.lates.length; i += 4) {
    // A late tick at `at`, `late` µs after it was due: the turn that held it began about 1 ms before it was due.
    const [at, late, cpu, waited] = probe.lates.slice(i, i + 4);
    if (within(at - late - 1000, at)) lates.push({ span: [at - late - 1000, at], cpu, waited });
  }
  const appendKind = probe.kinds.findIndex((kind) => SCRIPTS.get(kind.slice('evalsha '.length)) === 'APPEND_SCRIPT');
  const kindName = (code: number): string => {
    const kind = probe.kinds[code];
    return kind.startsWith('evalsha ') ? (SCRIPTS.get(kind.slice(8)) ?? kind.slice(0, 16)) : kind;
  };
  const trips: number[] = [];
  const others: { start: number; end: number; kind: number }[] = [];
  for (let i = 0; i < probe.calls.length; i += 3) {
    const [start, end, kind] = [probe.calls[i], probe.calls[i + 1], probe.calls[i + 2]];
    if (end <= 0 || !within(start, end)) continue;
    if (kind === appendKind) trips.push(end - start);
    else others.push({ start, end, kind });
  }
  trips.sort((a, b) => a - b);
  const latencies = frames.map(([published, written]) => written - published).sort((a, b) => a - b);
  const p99 = quantile(latencies, 0.99);
  const slow = frames.filter(([published, written]) => written - published >= p99);
  const lateSpans = lates.map((l) => l.span);
  let withGc = 0;
  let gcUs = 0;
  let inLate = 0;
  let slowUs = 0;
  for (const [published, written] of slow) {
    const gc = covered(published, written, gcs);
    if (gc > 0) withGc += 1;
    gcUs += gc;
    if (covered(published, written, lateSpans) > 0) inLate += 1;
    slowUs += written - published;
  }
  // The late turns that the slow frames fell in: their length, CPU and run-queue wait.
  const hit = lates.filter((l) => slow.some(([published, written]) => l.span[1] > published && l.span[0] < written));
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  const builds: [number, number][] = [];
  for (let i = 0; i < probe.snapshots.length; i += 2) if (within(probe.snapshots[i], probe.snapshots[i] + probe.snapshots[i + 1])) builds.push([probe.snapshots[i], probe.snapshots[i] + probe.snapshots[i + 1]]);
  const buildUs = builds.map(([s, e]) => e - s).sort((a, b) => a - b);
  let buildInside = 0;
  for (const [published, written] of slow) buildInside += covered(published, written, builds);
  const pauses = gcs.map(([s, e]) => e - s).sort((a, b) => a - b);
  const tenths = Array.from({ length: 10 }, () => 0);
  for (const [published] of slow) tenths[Math.min(9, Math.floor((10 * (published - window.from)) / (window.to - window.from)))] += 1;
  return [
    `${window.target} rep ${window.rep} (load ${window.load.toFixed(1)}): ${frames.length} frames, server-side latency p50 ${ms(quantile(latencies, 0.5))} / p99 ${ms(p99)} / max ${ms(latencies[latencies.length - 1] ?? NaN)} ms`,
    `  waited for a CPU during it (every thread, run-queue delay): server ${ms(window.waits.server)} ms, Redis ${ms(window.waits.redis)} ms, load ${ms(window.waits.load)} ms; CPU per frame: server ${window.cpu.server.toFixed(1)}, Redis ${window.cpu.redis.toFixed(1)}, load ${window.cpu.load.toFixed(1)} µs; Redis user ${window.redis.user.toFixed(1)} + system ${window.redis.system.toFixed(1)} µs/frame (INFO cpu), EVALSHA ${window.redis.evalshaUsPerCall.toFixed(1)} µs per call`,
    `  GC pauses ${pauses.length} (median ${ms(quantile(pauses, 0.5))}, max ${ms(pauses[pauses.length - 1] ?? NaN)}, ${ms(sum(pauses))} ms in all); late turns ${lates.length}: ${ms(sum(lates.map((l) => l.span[1] - l.span[0])))} ms, of which CPU ${ms(sum(lates.map((l) => l.cpu)))} ms and main thread waiting for a CPU ${ms(sum(lates.map((l) => l.waited)))} ms`,
    `  snapshots built ${builds.length} (median ${buildUs.length ? (quantile(buildUs, 0.5)).toFixed(0) : '-'} µs, max ${buildUs.length ? buildUs[buildUs.length - 1].toFixed(0) : '-'} µs, ${ms(sum(buildUs))} ms in all; ${((100 * buildInside) / slowUs).toFixed(1)} % of the slowest 1 %'s latency)`,
    `  other commands in the slowest 1 %'s windows (sent or answered inside one; count, longest round trip): ${busyCommands(others, slow, kindName) || 'none'}`,
    `  append calls ${trips.length}: p50 ${ms(quantile(trips, 0.5))} / p99 ${ms(quantile(trips, 0.99))} / max ${ms(trips[trips.length - 1] ?? NaN)} ms`,
    `  slowest 1 % (${slow.length} frames, >= ${ms(p99)} ms): ${withGc} with a GC pause inside (GC ${((100 * gcUs) / slowUs).toFixed(0)} % of their latency), ${inLate} in a late turn; those ${hit.length} turns: ${ms(sum(hit.map((l) => l.span[1] - l.span[0])))} ms, CPU ${ms(sum(hit.map((l) => l.cpu)))} ms, main thread waiting for a CPU ${ms(sum(hit.map((l) => l.waited)))} ms; by tenth of the repetition: ${tenths.join(' ')}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const toolCalls = Number(args[0] ?? 100);
  const reps = Number(args[1] ?? 3);
  const [prefillTasks, prefillCalls] = (args[2] ?? '200x100').split('x').map(Number);
  const targets = (args[3] ?? 'toolstream-redis').split(',') as Target[];
  const dir = join(__dirname, '.work', 'paced-tail');
  mkdirSync(dir, { recursive: true });
  const probeFile = join(dir, 'paced-tail-probe.js');
  writeFileSync(probeFile, transpileModule(readFileSync(join(__dirname, 'paced-tail-probe.ts'), 'utf8'), { compilerOptions: { module: ModuleKind.CommonJS, target: ScriptTarget.ES2022 } }).outputText);
  const outPrefix = join(dir, `probe-${process.pid}`);
  process.env.PACED_TAIL_OUT = outPrefix;
  useCompiledChildren(compileChildren());
  const redis = await BenchRedis.start();
  if (!redis) throw new Error('redis-server is not installed');
  process.env.BENCH_REDIS_URL = redis.url;
  const client = new Redis(redis.url);
  const redisPid = await redis.processId();
  const load = await LoadProcess.start();
  const pool = new ServerPool(load, redis, [`--require=${probeFile}`]);
  const windows: Window[] = [];
  const serverPids = new Map<Target, number | undefined>();
  const cpuUs = (pid: number | undefined): number => {
    const counts = procCounts(pid);
    if (!counts) return NaN;
    const { userUs, systemUs } = cpuUsageOf(counts);
    return userUs + systemUs;
  };
  try {
    for (const target of targets) {
      const server = await pool.server(target);
      serverPids.set(target, server.pid);
      if (prefillTasks > 0) await pool.run(target, prefillTasks, { toolCalls: prefillCalls, intervalMs: 0, idle: false }, 600_000, 10);
    }
    for (let rep = 0; rep < reps; rep++) {
      for (const target of targets) {
        const server = await pool.server(target);
        // The pool's warm-up (server-pool.ts), again right before the timed run, outside its window.
        await load.run({ url: server.url, streams: 20, maxOpen: 4, scenario: { toolCalls: 500, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
        const pids = [server.pid, redisPid, load.pid];
        const waitsBefore = pids.map((pid) => runQueueWaitUs(pid) ?? NaN);
        const cpuBefore = pids.map(cpuUs);
        await client.config('RESETSTAT');
        const redisBefore = await redisCpu(client);
        const from = nowUs();
        const measured = await pool.run(target, 100, { toolCalls, intervalMs: 50, idle: false }, 60_000);
        const to = nowUs();
        const waits = pids.map((pid, i) => (runQueueWaitUs(pid) ?? NaN) - waitsBefore[i]);
        const frames = measured.result.frames;
        const cpu = pids.map((pid, i) => (cpuUs(pid) - cpuBefore[i]) / frames);
        const redisAfter = await redisCpu(client);
        const evalsha = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await client.info('commandstats'));
        const redisFigures = { user: (redisAfter.user - redisBefore.user) / frames, system: (redisAfter.system - redisBefore.system) / frames, evalshaUsPerCall: evalsha ? Number(evalsha[2]) / Number(evalsha[1]) : NaN };
        windows.push({ target, rep, from, to, load: measured.loadAverage, waits: { server: waits[0], redis: waits[1], load: waits[2] }, cpu: { server: cpu[0], redis: cpu[1], load: cpu[2] }, redis: redisFigures });
        console.log(`${target} rep ${rep}: bench p50 ${measured.result.latency.p50Ms.toFixed(2)} / p99 ${measured.result.latency.p99Ms.toFixed(2)} ms`);
      }
    }
  } finally {
    client.disconnect();
    await pool.stopAll();
    await load.stop();
    await redis.stop();
  }
  for (const window of windows) {
    const probe = JSON.parse(readFileSync(`${outPrefix}-${serverPids.get(window.target)}.json`, 'utf8')) as Probe;
    console.log(report(probe, window));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

/**
 * `node -r ts-node/register/transpile-only bench/task-end-cost.ts [toolCalls=100] [reps=3] [targets=toolstream-redis,toolstream] [prefill=200x100] [--no-slowlog] [--profile]`
 *
 * What the paced row's task ends cost, apart from their frames: 100 paced streams (a tool call
 * every 50 ms each, as bench/paced-latency.ts) whose tasks end within one 50 ms interval, with
 * bench/task-end-probe.ts preloaded in the server. Per repetition and target (comma-separated
 * targets take turns, each after the pool's warm-up):
 * - the server's main thread CPU (time on a CPU, not waits for one) in the end window (from 50 ms
 *   before the last frame's publish to the last frame written or end command answered), less what
 *   the same 50 ms cost in the middle of the run (its frames), per task end;
 * - the Redis commands the server sent in that window, by kind: count and bytes per task end;
 * - the snapshots built in that window (the ends' own): median build time and size;
 * - Redis mode, with SLOWLOG at 0 µs over the repetition (it adds to every command; `--no-slowlog`
 *   leaves it off): Redis's time per call by kind (the append script split into frames only, with a
 *   periodic snapshot, and the end's), and in Redis's own order, the time it spent from the first
 *   end's append to the last RETAIN_SCRIPT call, by kind: how much of Redis's thread the ends took
 *   while the last frames of the other tasks waited behind them on the same connection.
 * `--profile`: V8's CPU profiler in the server over each timed run (every 100 µs), its samples in
 * the end window against the middle's, per task end, by function and by source file.
 * Counts and CPU, not latency: the probe's 2 ms timer and SLOWLOG add work of their own.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { transpileModule, ModuleKind, ScriptTarget } from 'typescript';
import type { Target } from './lib/ipc';
import { compileChildren } from './lib/compile-children';
import { LoadProcess, useCompiledChildren } from './lib/processes';
import { BenchRedis } from './lib/redis';
import { nowUs } from './lib/scenario';
import { ServerPool } from './lib/server-pool';
import { ADMIT_LIVE_SCRIPT, RENEW_LIVE_SCRIPT } from '../src/a2a/store/redis-live-limits';
import { RETAIN_SCRIPT } from '../src/a2a/store/redis-retention';
import { APPEND_SCRIPT } from '../src/a2a/store/redis-task-appender';
import * as runQueueScripts from '../src/a2a/store/run-queue-scripts';

const SCRIPTS = new Map(
  Object.entries({ APPEND_SCRIPT, ADMIT_LIVE_SCRIPT, RENEW_LIVE_SCRIPT, RETAIN_SCRIPT, ...runQueueScripts })
    .filter((entry): entry is [string, string] => entry[0].endsWith('_SCRIPT') && typeof entry[1] === 'string')
    .map(([name, lua]) => [createHash('sha1').update(lua).digest('hex'), name.replace(/_SCRIPT$/, '').toLowerCase()]),
);

interface Probe {
  /** publish time, written time, tool call number */
  frames: number[];
  /** responses' ends */
  ends: number[];
  calls: number[];
  kinds: string[];
  cpu: number[];
  snapshots: number[];
}

type SlowEntry = [number, number, number, string[]];

const TASKS = 100;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)];
}

/** The main thread's CPU µs at `t`, interpolated between the probe's samples. */
function cpuAt(probe: Probe, t: number): number {
  const c = probe.cpu;
  let lo = 0;
  let hi = c.length / 2 - 1;
  if (hi < 0) return NaN;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (c[2 * mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  const next = Math.min(lo + 1, c.length / 2 - 1);
  if (next === lo || c[2 * next] === c[2 * lo]) return c[2 * lo + 1];
  const f = Math.max(0, Math.min(1, (t - c[2 * lo]) / (c[2 * next] - c[2 * lo])));
  return c[2 * lo + 1] + f * (c[2 * next + 1] - c[2 * lo + 1]);
}

/** What an append call's slowlog entry was: the payload's head names its state and extras (see APPEND_SCRIPT). */
function slowKind(args: string[]): string {
  const name = (args[0] ?? '?').toLowerCase();
  if (name !== 'evalsha') return name;
  const script = SCRIPTS.get(args[1] ?? '') ?? `evalsha:${(args[1] ?? '').slice(0, 8)}`;
  if (script !== 'append') return script;
  const head = (args[6] ?? '').split(' ');
  const state = head[1] ?? '';
  const extra = head[6] ?? '';
  if (/COMPLETED|FAILED|CANCELED|REJECTED/.test(state)) return 'append (end)';
  return extra.includes('s') ? 'append (snapshot)' : 'append';
}

/** Bytes an argument had (SLOWLOG cuts long ones to 128 characters and says how many more there were). */
function argBytes(arg: string): number {
  const more = /\.\.\. \((\d+) more bytes\)$/.exec(arg);
  return more ? arg.length - more[0].length + Number(more[1]) : arg.length;
}

function describeSlowlog(entries: SlowEntry[]): string[] {
  const ordered = [...entries].sort((a, b) => a[0] - b[0]);
  const all = new Map<string, { calls: number; us: number; bytes: number }>();
  for (const [, , us, args] of ordered) {
    const kind = slowKind(args);
    const row = all.get(kind) ?? { calls: 0, us: 0, bytes: 0 };
    row.calls += 1;
    row.us += us;
    row.bytes += args.reduce((sum, arg) => sum + argBytes(arg), 0);
    all.set(kind, row);
  }
  const firstEnd = ordered.findIndex(([, , , args]) => slowKind(args) === 'append (end)');
  let lastRetain = -1;
  ordered.forEach(([, , , args], i) => {
    if (slowKind(args) === 'retain') lastRetain = i;
  });
  const inEnd = new Map<string, { calls: number; us: number }>();
  if (firstEnd >= 0 && lastRetain > firstEnd) {
    for (const [, , us, args] of ordered.slice(firstEnd, lastRetain + 1)) {
      const kind = slowKind(args);
      const row = inEnd.get(kind) ?? { calls: 0, us: 0 };
      row.calls += 1;
      row.us += us;
      inEnd.set(kind, row);
    }
  }
  const endTotal = [...inEnd.values()].reduce((sum, row) => sum + row.us, 0);
  return [
    `  Redis, per call by kind (SLOWLOG at 0 µs): ${[...all]
      .sort((a, b) => b[1].us - a[1].us)
      .map(([kind, row]) => `${kind} ${row.calls} × ${(row.us / row.calls).toFixed(1)} µs, ${Math.round(row.bytes / row.calls)} B`)
      .join('; ')}`,
    `  Redis from the first end's append to the last RETAIN (its own order): ${(endTotal / 1000).toFixed(2)} ms in ${[...inEnd.values()].reduce((sum, row) => sum + row.calls, 0)} commands: ${[...inEnd]
      .sort((a, b) => b[1].us - a[1].us)
      .map(([kind, row]) => `${kind} ${row.calls} / ${(row.us / 1000).toFixed(2)} ms`)
      .join(', ')}`,
  ];
}

function describe(probe: Probe, from: number, to: number, appendKinds: Set<number>, windows?: { end?: [number, number, number]; middle?: [number, number, number] }): string[] {
  const frames: { published: number; written: number; seq: number }[] = [];
  for (let i = 0; i < probe.frames.length; i += 3) {
    if (probe.frames[i] >= from && probe.frames[i] < to) frames.push({ published: probe.frames[i], written: probe.frames[i + 1], seq: probe.frames[i + 2] });
  }
  if (frames.length === 0) return ['  no frames'];
  const lastSeq = Math.max(...frames.map((f) => f.seq));
  const first = Math.min(...frames.map((f) => f.published));
  const last = Math.max(...frames.map((f) => f.published));
  // The end window: from the first publish of a task's last tool call to the last frame written,
  // response ended or end command answered (RETAIN_SCRIPT, the live slots' release).
  const endFrom = Math.min(...frames.filter((f) => f.seq === lastSeq).map((f) => f.published));
  let endTo = Math.max(...frames.map((f) => f.written));
  for (const t of probe.ends) if (t >= endFrom && t < to) endTo = Math.max(endTo, t);
  const inWindow: { start: number; end: number; kind: string; bytes: number }[] = [];
  for (let i = 0; i < probe.calls.length; i += 4) {
    const [start, end, code, bytes] = probe.calls.slice(i, i + 4);
    const kind = probe.kinds[code];
    const name = kind.startsWith('evalsha ') ? (SCRIPTS.get(kind.slice(8)) ?? kind.slice(0, 16)) : kind;
    if (start >= endFrom && start < to) inWindow.push({ start, end, kind: appendKinds.has(code) ? 'append' : name, bytes });
  }
  for (const call of inWindow) if ((call.kind === 'retain' || call.kind === 'exec') && call.end > 0) endTo = Math.max(endTo, Math.min(call.end, to));
  const endCalls = new Map<string, { calls: number; bytes: number }>();
  for (const call of inWindow) {
    if (call.start > endTo) continue;
    const row = endCalls.get(call.kind) ?? { calls: 0, bytes: 0 };
    row.calls += 1;
    row.bytes += call.bytes;
    endCalls.set(call.kind, row);
  }
  // The frames' own CPU: per frame written in the middle of the run (30-70 % of its publish span).
  const midFrom = first + 0.3 * (last - first);
  const midTo = first + 0.7 * (last - first);
  const midFrames = frames.filter((f) => f.written >= midFrom && f.written < midTo).length;
  const perFrame = (cpuAt(probe, midTo) - cpuAt(probe, midFrom)) / midFrames;
  const endFrames = frames.filter((f) => f.written >= endFrom && f.written <= endTo).length;
  const endCpu = cpuAt(probe, endTo) - cpuAt(probe, endFrom);
  const extra = endCpu - perFrame * endFrames;
  if (windows) {
    windows.end = [endFrom, endTo, endFrames];
    windows.middle = [midFrom, midTo, midFrames];
  }
  const builds: { us: number; bytes: number }[] = [];
  for (let i = 0; i < probe.snapshots.length; i += 3) if (probe.snapshots[i] >= endFrom && probe.snapshots[i] <= endTo) builds.push({ us: probe.snapshots[i + 1], bytes: probe.snapshots[i + 2] });
  return [
    `  end window ${((endTo - endFrom) / 1000).toFixed(1)} ms (from the first publish of a last tool call to the last frame written, response ended or RETAIN/EXEC answered), ${endFrames} frames: main thread CPU ${(endCpu / 1000).toFixed(1)} ms, their frames' share (${perFrame.toFixed(1)} µs per frame, as in the middle of the run) ${((perFrame * endFrames) / 1000).toFixed(1)} ms, the rest ${(extra / 1000).toFixed(1)} ms = ${(extra / TASKS).toFixed(0)} µs per task end`,
    `  commands sent in it per task end (count, bytes): ${[...endCalls]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .map(([name, row]) => `${name} ${(row.calls / TASKS).toFixed(2)} / ${Math.round(row.bytes / TASKS)} B`)
      .join(', ') || 'none'}`,
    `  snapshots built in it: ${builds.length}, median ${median(builds.map((b) => b.us)).toFixed(0)} µs, ${Math.round(median(builds.map((b) => b.bytes)))} B (${(builds.reduce((s, b) => s + b.us, 0) / 1000).toFixed(2)} ms in all)`,
  ];
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * The CPU profile's samples in the end window against the middle's (per frame written, scaled to
 * the end window's frames), by function (self) and by source file on the stack (inclusive): what
 * the ends added, per task end, largest first.
 */
function describeProfile(profile: CpuProfile, end: [number, number, number], middle: [number, number, number]): string[] {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const name = (id: number): string => {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const file = url.replace(/^.*\/(src|node_modules)\//, '$1/').replace(/^node:/, '');
    return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
  };
  const fileOf = (id: number): string => {
    const { url } = byId.get(id)!.callFrame;
    const m = /\/(src\/.*|node_modules\/[^/]+)/.exec(url);
    return m ? m[1].replace(/\.js$/, '') : url.startsWith('node:') ? url : '';
  };
  const self = [new Map<string, number>(), new Map<string, number>()];
  const inclusive = [new Map<string, number>(), new Map<string, number>()];
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const which = t >= end[0] && t < end[1] ? 0 : t >= middle[0] && t < middle[1] ? 1 : -1;
    if (which < 0) continue;
    const leaf = profile.samples[i];
    const leafName = name(leaf);
    self[which].set(leafName, (self[which].get(leafName) ?? 0) + dt);
    const files = new Set<string>();
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const file = fileOf(id);
      if (file) files.add(file);
    }
    for (const file of files) inclusive[which].set(file, (inclusive[which].get(file) ?? 0) + dt);
  }
  const scale = end[2] / middle[2];
  const diff = (maps: Map<string, number>[]): [string, number][] => {
    const keys = new Set([...maps[0].keys(), ...maps[1].keys()]);
    return [...keys].map((key): [string, number] => [key, ((maps[0].get(key) ?? 0) - scale * (maps[1].get(key) ?? 0)) / TASKS]).sort((a, b) => b[1] - a[1]);
  };
  const total = (map: Map<string, number>): number => [...map.values()].reduce((a, b) => a + b, 0);
  return [
    `  CPU profile: sampled ${(total(self[0]) / 1000).toFixed(1)} ms in the end window, ${((scale * total(self[1])) / 1000).toFixed(1)} ms for as many frames in the middle: ${((total(self[0]) - scale * total(self[1])) / TASKS).toFixed(0)} µs per task end`,
    `  per task end, by source on the stack (inclusive, µs): ${diff(inclusive)
      .slice(0, 25)
      .map(([key, us]) => `${key} ${us.toFixed(0)}`)
      .join(', ')}`,
    `  per task end, by function (self, µs): ${diff(self)
      .slice(0, 25)
      .map(([key, us]) => `${key} ${us.toFixed(0)}`)
      .join(', ')}`,
  ];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const toolCalls = Number(args[0] ?? 100);
  const reps = Number(args[1] ?? 3);
  const targets = (args[2] ?? 'toolstream-redis,toolstream').split(',') as Target[];
  const [prefillTasks, prefillCalls] = (args[3] ?? '200x100').split('x').map(Number);
  const slowlog = !process.argv.includes('--no-slowlog');
  const profile = process.argv.includes('--profile');
  if (profile) process.env.TASK_END_PROFILE = '1';
  const dir = join(__dirname, '.work', 'task-end');
  mkdirSync(dir, { recursive: true });
  const probeFile = join(dir, 'task-end-probe.js');
  writeFileSync(probeFile, transpileModule(readFileSync(join(__dirname, 'task-end-probe.ts'), 'utf8'), { compilerOptions: { module: ModuleKind.CommonJS, target: ScriptTarget.ES2022 } }).outputText);
  const outPrefix = join(dir, `probe-${process.pid}`);
  process.env.TASK_END_OUT = outPrefix;
  useCompiledChildren(compileChildren());
  const redis = await BenchRedis.start();
  if (!redis) throw new Error('redis-server is not installed');
  process.env.BENCH_REDIS_URL = redis.url;
  const client = new Redis(redis.url);
  const load = await LoadProcess.start();
  const pool = new ServerPool(load, redis, [`--require=${probeFile}`]);
  const runs: { target: Target; rep: number; from: number; to: number; load: string; slow?: SlowEntry[]; p99: number; profileFile?: string }[] = [];
  const profiled = new Map<Target, number>();
  const pids = new Map<Target, number | undefined>();
  try {
    for (const target of targets) {
      const server = await pool.server(target);
      pids.set(target, server.pid);
      if (prefillTasks > 0) await pool.run(target, prefillTasks, { toolCalls: prefillCalls, intervalMs: 0, idle: false }, 600_000, 10);
    }
    for (let rep = 0; rep < reps; rep++) {
      for (const target of targets) {
        const server = await pool.server(target);
        await load.run({ url: server.url, streams: 20, maxOpen: 4, scenario: { toolCalls: 500, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
        const redisMode = target.endsWith('-redis');
        if (redisMode && slowlog) {
          await client.config('SET', 'slowlog-max-len', '1000000');
          await client.config('SET', 'slowlog-log-slower-than', '0');
          await client.slowlog('RESET');
        }
        if (profile) {
          process.kill(server.pid!, 'SIGUSR2');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const from = nowUs();
        const measured = await pool.run(target, TASKS, { toolCalls, intervalMs: 50, idle: false }, 60_000);
        // The ends' calls after the last stream closed.
        await new Promise((resolve) => setTimeout(resolve, 300));
        if (profile) {
          process.kill(server.pid!, 'SIGUSR2');
          await new Promise((resolve) => setTimeout(resolve, 1500));
        }
        const to = nowUs();
        let slow: SlowEntry[] | undefined;
        if (redisMode && slowlog) {
          await client.config('SET', 'slowlog-log-slower-than', '-1');
          slow = ((await client.slowlog('GET', -1)) as unknown[][]).map((e) => [Number(e[0]), Number(e[1]), Number(e[2]), (e[3] as unknown[]).map(String)]);
          await client.slowlog('RESET');
        }
        const n = profiled.get(target) ?? 0;
        if (profile) profiled.set(target, n + 1);
        runs.push({ target, rep, from, to, load: loadavg()[0].toFixed(1), slow, p99: measured.result.latency.p99Ms, profileFile: profile ? `${outPrefix}-${server.pid}-${n}.cpuprofile` : undefined });
        console.log(`${target} rep ${rep}: ${measured.result.completed} streams, ${measured.result.frames} frames, p99 ${measured.result.latency.p99Ms.toFixed(2)} ms, load ${loadavg()[0].toFixed(1)}`);
      }
    }
  } finally {
    client.disconnect();
    await pool.stopAll();
    await load.stop();
    await redis.stop();
  }
  for (const run of runs) {
    const probe = JSON.parse(readFileSync(`${outPrefix}-${pids.get(run.target)}.json`, 'utf8')) as Probe;
    const appendKinds = new Set(probe.kinds.map((kind, i) => (SCRIPTS.get(kind.slice(8)) === 'append' ? i : -1)).filter((i) => i >= 0));
    console.log(`${run.target} rep ${run.rep} (load ${run.load}, p99 ${run.p99.toFixed(2)} ms):`);
    const windows: { end?: [number, number, number]; middle?: [number, number, number] } = {};
    for (const line of describe(probe, run.from, run.to, appendKinds, windows)) console.log(line);
    if (run.profileFile && windows.end && windows.middle) for (const line of describeProfile(JSON.parse(readFileSync(run.profileFile, 'utf8')) as CpuProfile, windows.end, windows.middle)) console.log(line);
    if (run.slow) for (const line of describeSlowlog(run.slow)) console.log(line);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

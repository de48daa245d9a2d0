/**
 * `node bench/.work/probe/bench/empty-levels.js [windows] [tasks] [--warm=12000] [--target=toolstream|limit|floor] [--idle=MS] [--pin=same,apart]`
 *
 * The empty-task section's sequence on one server, window by window, with what each window's
 * CPU per task is made of: toolstream's server (or the limit, or the floor) runs in this process,
 * the load generator in its own; after `--warm` empty tasks (the section's 12,000), `windows`
 * windows of `tasks` (the section's 1,200), each printed as one line: CPU per task (user, system;
 * this process's main thread and its other threads, /proc in 10 ms ticks), scavenges and other
 * GCs (count, pause ms), the young generation's capacity at the window's end (V8 grows and
 * shrinks it), old space used, minor page faults, context switches (voluntary, involuntary) per
 * task, the ms its threads waited for a CPU (/proc schedstat), wall time per task, a speed probe
 * before and after the window (the CPU µs of a fixed piece of JavaScript: whether the CPU is
 * slower for any code now) and the load average. `--idle=MS` sleeps between windows (the full
 * run's servers idle while the others take their turn). `--pin=same,apart` pins (taskset, every
 * thread) this process and the load generator, window by window in turn, to one CPU (`same`) or
 * to one CPU each (`apart`), the CPUs swapped every other turn; `none` leaves them to the
 * scheduler. One stream of empty tasks is a ping-pong of the two processes.
 * Run it compiled, as the bench runs its servers (under ts-node this process would load ts-node's
 * modules too): a tsconfig that extends bench/tsconfig.children.json with this file added to its
 * `files` and another outDir (bench/.work/probe), then `node bench/.work/probe/bench/empty-levels.js`.
 * With node's `--trace-gc-nvp --trace-opt --trace-deopt` under `stdbuf -oL`, V8's lines fall
 * between this script's `window N begins` and `window N:` lines (V8 prints through C stdio, which
 * is block-buffered into a file without stdbuf). Each window line gives its CLOCK_MONOTONIC span:
 * with `node --perf-basic-prof` and `perf record -k CLOCK_MONOTONIC -F 4999 -p <pid>`, the
 * samples of `perf script -F tid,time,ip,sym,dso` can be cut by window (a slow window against a
 * fast one, docs/performance.md, "How the empty task is measured", twenty-first round).
 */
import { readFileSync, readdirSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { getHeapSpaceStatistics } from 'node:v8';
import { watchGcPauses } from './lib/gc-pauses';
import { startInProcessServer } from './lib/in-process-server';
import { pinToCpus } from './lib/pin-to-cpus';

/** This process's threads: CPU in clock ticks (main thread apart) and ns waited for a CPU. */
function threads(): { main: number; others: number; waitNs: number } {
  let main = 0;
  let others = 0;
  let waitNs = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      if (Number(tid) === process.pid) main += ticks;
      else others += ticks;
      waitNs += Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return { main, others, waitNs };
}

function space(name: string): { size: number; used: number } {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === name);
  return { size: s?.space_size ?? NaN, used: s?.space_used_size ?? NaN };
}

/** Where window `w` (from 1) runs the two processes: [this process's CPUs, the load generator's]. */
function placement(modes: string[], w: number): { mode: string; server: string; load: string } {
  const mode = modes[(w - 1) % modes.length];
  // Which CPU is "first" swaps after each full turn of the modes, so neither CPU is always the server's.
  const k = Math.floor((w - 1) / modes.length) % 2;
  if (mode === 'same') return { mode, server: String(k), load: String(k) };
  if (mode === 'apart') return { mode, server: String(k), load: String(1 - k) };
  if (mode === 'none') return { mode, server: '0,1', load: '0,1' };
  throw new Error(`--pin: unknown mode ${mode}`);
}

/**
 * The CPU µs a fixed piece of JavaScript takes (string building, JSON, a Map, small objects:
 * a few ms), median of five, between windows: how fast this CPU runs code that is not the
 * server's, with the load generator idle (the probe's own objects die young).
 */
function speedProbe(): number {
  const times: number[] = [];
  let sink = 0;
  for (let r = 0; r < 5; r++) {
    const start = process.cpuUsage();
    const map = new Map<string, { id: number; text: string }>();
    for (let i = 0; i < 4000; i++) {
      const key = `task-${i}-${r}`;
      map.set(key, { id: i, text: JSON.stringify({ key, i, parts: [i, i * 2, 'x'] }) });
    }
    for (const [key, value] of map) sink += key.length + JSON.parse(value.text).i;
    const used = process.cpuUsage(start);
    times.push(used.user + used.system);
  }
  if (sink === 42) console.log('');
  return times.sort((a, b) => a - b)[2];
}

/** Milliseconds on CLOCK_MONOTONIC, the clock perf stamps its samples with. */
const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

function say(line: string): void {
  // Straight to fd 1, so it is ordered with V8's own trace lines (stdbuf -oL for those).
  writeSync(1, `${line}\n`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [windows = 30, tasks = 1200] = args.filter((a) => !a.startsWith('--')).map(Number);
  const option = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const target = option('target') ?? 'toolstream';
  const idleMs = Number(option('idle') ?? 0);
  const modes = option('pin')?.split(',');
  const server = await startInProcessServer(target);
  const load = server.load;
  try {
    if (modes) {
      pinToCpus(process.pid, '0,1');
      pinToCpus(load.pid, '0,1');
    }
    await server.emptyTasks(Number(option('warm') ?? 12_000));
    say(`${target}: warm, ${windows} windows of ${tasks} tasks, idle ${idleMs} ms between`);
    for (let w = 1; w <= windows; w++) {
      if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
      const where = modes === undefined ? undefined : placement(modes, w);
      if (where) {
        pinToCpus(process.pid, where.server);
        pinToCpus(load.pid, where.load);
      }
      const probeBefore = speedProbe();
      say(`window ${w} begins`);
      const gc = watchGcPauses();
      const t0 = threads();
      const r0 = process.resourceUsage();
      const from = monotonicMs();
      await server.emptyTasks(tasks);
      const to = monotonicMs();
      const r1 = process.resourceUsage();
      const t1 = threads();
      const pauses = await gc.stop(20);
      const probeAfter = speedProbe();
      const per = (v: number): string => (v / tasks).toFixed(0);
      const perTick = (ticks: number): string => ((ticks * 10_000) / tasks).toFixed(0);
      const scav = pauses.get('scavenge') ?? { count: 0, ms: 0 };
      const other = [...pauses].filter(([k]) => k !== 'scavenge');
      const oldSpace = space('old_space');
      say(
        `window ${w}${where ? ` (${where.mode}: server on ${where.server}, load generator on ${where.load})` : ''}: ${per(r1.userCPUTime - r0.userCPUTime + r1.systemCPUTime - r0.systemCPUTime)} µs per task ` +
          `(user ${per(r1.userCPUTime - r0.userCPUTime)}, system ${per(r1.systemCPUTime - r0.systemCPUTime)}; main ${perTick(t1.main - t0.main)}, others ${perTick(t1.others - t0.others)}), ` +
          `scavenges ${scav.count} (${scav.ms.toFixed(1)} ms), other GCs ${other.map(([k, v]) => `${k} ${v.count} (${v.ms.toFixed(1)} ms)`).join(', ') || 'none'}, ` +
          `new space ${(space('new_space').size / 2 ** 20).toFixed(1)} MiB, old space ${(oldSpace.used / 2 ** 20).toFixed(1)} / ${(oldSpace.size / 2 ** 20).toFixed(1)} MiB, ` +
          `faults ${((r1.minorPageFault - r0.minorPageFault) / tasks).toFixed(2)}, switches ${((r1.voluntaryContextSwitches - r0.voluntaryContextSwitches) / tasks).toFixed(2)} / ` +
          `${((r1.involuntaryContextSwitches - r0.involuntaryContextSwitches) / tasks).toFixed(2)} per task, waited ${((t1.waitNs - t0.waitNs) / 1e6).toFixed(0)} ms, ` +
          `${((1000 * (to - from)) / tasks).toFixed(0)} µs wall per task, speed probe ${probeBefore} / ${probeAfter} µs, monotonic ${from.toFixed(1)}-${to.toFixed(1)} ms, load ${loadavg()[0].toFixed(2)}`,
      );
    }
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);

/**
 * `node -r ts-node/register/transpile-only bench/stream-levels.ts <rounds> [toolCalls=100] [streams=1000] [--gap=<ms>] [--warm-young] [--gc-before] [--perf] [--record=<dir>[,cpu-clock|page-faults]] [--flags=<node flags for toolstream, comma-separated>] [--targets=toolstream,limit]`
 *
 * Which level a flat-out many-stream run of toolstream lands on (docs/performance.md: in the
 * full runs its CPU per frame at 1,000 streams sat at 15.0–18.4 or 21.2–29.3 µs), with the
 * counts of each run that could say why. The servers run compiled, as in a full run, and take
 * turns in the side-by-side section's order (lib/pairing.ts: toolstream, limit, limit,
 * toolstream; the next round limit, toolstream, toolstream, limit), so a server's runs follow
 * the same idle gaps as there. Per run, per frame:
 * - the server's user and system CPU, its main thread's and its other threads' (GC helpers,
 *   compiler) apart;
 * - its write and read system calls (/proc/<pid>/io `syscw`, `syscr`): frames per socket write
 *   is how many frames a turn batches; the load generator's reads and waits (voluntary
 *   switches) per frame;
 * - its scavenges and other GCs (their count and pause, from the server's GC observer), the
 *   young generation's capacity before and after the run (V8 shrinks it in a server that idled,
 *   and a run that starts small pays for more scavenges while it grows back), the old space in
 *   use and free at the start, and the minor page faults (the heap taking new pages);
 * - where the scheduler put the server's and the load generator's main threads: the share of
 *   samples (every 5 ms, /proc .../stat field 39) on one CPU;
 * - with `--perf` (Linux perf with tracepoint access), the server's main thread's event-loop
 *   turns (epoll_pwait calls), its futex calls (waits on the GC's helper threads) and page
 *   faults, its other threads' futex calls and page faults, and every thread's mmap, munmap,
 *   madvise, mprotect and brk calls per 1,000 frames (`…PerK`);
 * - with `--record=<dir>[,cpu-clock|page-faults]`, a `perf record -g` of the server per run
 *   (every thread, kernel included) into `<dir>/<target>-<round>-<n>.data`: on the software
 *   clock (where its system time goes) or on every page fault (what faults); bench/kernel-split.ts
 *   reads them.
 * `toolCalls` 0 runs the empty-task section's job instead: after 10,000 uncounted empty tasks,
 * each run sends `streams` empty tasks one at a time, and the counts are per task.
 * At the end it splits toolstream's runs into the two levels at the widest gap between their
 * sorted CPU per frame and prints each count's median per level: a count that moves with the
 * level is a candidate cause, one that does not is not. `--gap=<ms>` idles that long before
 * each run (a longer pause between the runs than the section's); `--warm-young` runs the
 * warm-up job (20 streams of 500 calls, 4 at a time) again right before each run, as the paced
 * rows do, so that a young generation V8 shrank while the server idled (past ~13-16 s) has
 * grown back before the counted run (a smaller job does not: it takes the shrink itself); `--gc-before` has every server run a full GC
 * right before each run (no mark-compact left pending from the runs before); `--flags` starts
 * toolstream's server with those node flags (e.g. `--trace-opt,--trace-deopt`: its lines fall
 * between the run lines, toolstream's compiles and deoptimisations by run). Counts do not move with the machine's load the
 * way CPU time does; compare levels within one sitting.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Target } from './lib/ipc';
import { repetitionOrder } from './lib/pairing';
import { LoadProcess, ServerProcess } from './lib/processes';
import { countsPer, minorFaults, procCounts, procIo, sampleSameCpu, threadCpu } from './lib/proc-counts';
import { compileChildren } from './lib/compile-children';
import { useCompiledChildren } from './lib/processes';
import { startPerfRecord } from './lib/perf-record';
import { sumPerfStat } from './lib/perf-stat';
import { EMPTY_TASK } from './lib/scenario';
import { median } from './lib/stats';

const PERF_EVENTS = ['syscalls:sys_enter_epoll_pwait', 'syscalls:sys_enter_futex', 'page-faults'];
/** The memory-mapping calls `--perf` counts too (every thread), per 1,000 frames: the heap taking and giving back pages. */
const MAP_CALLS = ['mmap', 'munmap', 'madvise', 'mprotect', 'brk'];

/** Counts the server's turns, futex calls and page faults with `perf stat` until stopped (per frame). */
function perfCounts(pid: number): (frames: number) => Promise<Record<string, number>> {
  const file = join(tmpdir(), `stream-levels-${process.pid}.csv`);
  rmSync(file, { force: true });
  const events = [...PERF_EVENTS, ...MAP_CALLS.map((call) => `syscalls:sys_enter_${call}`)];
  const perf = spawn('perf', ['stat', '--per-thread', '-x,', '-e', events.join(','), '-p', String(pid), '-o', file], { stdio: 'ignore' });
  return async (frames) => {
    const exited = once(perf, 'exit');
    perf.kill('SIGINT');
    await exited;
    const sums = sumPerfStat(readFileSync(file, 'utf8'), pid);
    rmSync(file, { force: true });
    const of = (event: string, thread: 'main' | 'others'): number => (sums.get(event)?.[thread] ?? NaN) / frames;
    return {
      turns: of(PERF_EVENTS[0], 'main'),
      futexMain: of(PERF_EVENTS[1], 'main'),
      futexOthers: of(PERF_EVENTS[1], 'others'),
      faultsMain: of(PERF_EVENTS[2], 'main'),
      faultsOthers: of(PERF_EVENTS[2], 'others'),
      ...Object.fromEntries(MAP_CALLS.map((call) => [`${call}PerK`, 1000 * (of(`syscalls:sys_enter_${call}`, 'main') + of(`syscalls:sys_enter_${call}`, 'others'))])),
    };
  };
}

interface RunLine {
  target: Target;
  round: number;
  cpu: number;
  counts: Record<string, number>;
}

const COUNT_NAMES = [
  'user',
  'system',
  'mainThread',
  'otherThreads',
  'framesPerWrite',
  'serverReads',
  'loadReads',
  'loadWaits',
  'serverWaits',
  'serverPreempted',
  'scavenges',
  'scavengeMs',
  'otherGcs',
  'otherGcMs',
  'youngMiBBefore',
  'youngMiBAfter',
  'oldMiBAtStart',
  'oldFreeMiBAtStart',
  'faults',
  'sameCpu',
  'turns',
  'futexMain',
  'futexOthers',
  'faultsMain',
  'faultsOthers',
  'mmapPerK',
  'munmapPerK',
  'madvisePerK',
  'mprotectPerK',
  'brkPerK',
] as const;

function describe(counts: Record<string, number>): string {
  return COUNT_NAMES.filter((k) => counts[k] !== undefined).map((k) => `${k} ${Number.isInteger(counts[k]) ? counts[k] : counts[k].toFixed(k === 'framesPerWrite' || k === 'sameCpu' ? 2 : 3)}`).join(', ');
}

async function main(): Promise<void> {
  const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const rounds = Number(positional[0]);
  const toolCalls = Number(positional[1] ?? 100);
  const streams = Number(positional[2] ?? 1000);
  const option = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const gapMs = Number(option('gap') ?? 0);
  const warmYoung = process.argv.includes('--warm-young');
  const gcBeforeRun = process.argv.includes('--gc-before');
  const withPerf = process.argv.includes('--perf');
  const flags = (option('flags') ?? '').split(',').filter(Boolean);
  const [recordDir, recordEvent = 'cpu-clock'] = (option('record') ?? '').split(',');
  if (recordEvent !== 'cpu-clock' && recordEvent !== 'page-faults') throw new Error(`--record=<dir>[,cpu-clock|page-faults], not ${recordEvent}`);
  const targets = (option('targets') ?? 'toolstream,limit').split(',') as Target[];
  // toolCalls 0: the empty-task section's job (tasks one at a time after 10,000 uncounted), counts per task.
  const empty = toolCalls === 0;
  if (!(rounds > 0 && toolCalls >= 0 && streams > 0)) throw new Error('usage: bench/stream-levels.ts <rounds> [toolCalls=100] [streams=1000] [--gap=<ms>] [--warm-young] [--gc-before] [--perf] [--record=<dir>[,cpu-clock|page-faults]] [--flags=a,b] [--targets=toolstream,limit]');
  useCompiledChildren(compileChildren());
  const load = await LoadProcess.start();
  const servers = new Map<Target, ServerProcess>();
  const lines: RunLine[] = [];
  const warm = { streams: 20, maxOpen: 4, scenario: { toolCalls: 500, intervalMs: 0, idle: false }, timeLimitMs: 60_000 };
  try {
    for (const t of targets) servers.set(t, await ServerProcess.start(t, {}, t === 'toolstream' ? flags : []));
    for (const server of servers.values()) {
      await load.run({ url: server.url, ...warm });
      if (empty) await load.run({ url: server.url, streams: 10_000, maxOpen: 1, scenario: EMPTY_TASK, timeLimitMs: 600_000 });
      await server.gcPauses();
    }
    for (let round = 0; round < rounds; round++) {
      for (const target of repetitionOrder(targets, round, true)) {
        const server = servers.get(target) as ServerProcess;
        const pid = server.pid as number;
        const loadPid = load.pid as number;
        if (gapMs > 0) await sleep(gapMs);
        if (warmYoung) await load.run({ url: server.url, ...warm });
        if (gcBeforeRun) await server.memory(true);
        const gcBefore = await server.gcPauses();
        const faultsBefore = minorFaults(pid);
        const threadsBefore = threadCpu(pid);
        const before = procCounts(pid);
        const loadBefore = procCounts(loadPid);
        const ioBefore = procIo(pid);
        const loadIoBefore = procIo(loadPid);
        const placement = sampleSameCpu(pid, loadPid, 5);
        const perf = withPerf ? perfCounts(pid) : undefined;
        // perf takes a moment to attach.
        if (perf) await sleep(300);
        const recordFile = join(recordDir, `${target}-${round + 1}-${lines.filter((x) => x.target === target && x.round === round).length + 1}.data`);
        const record = recordDir ? await startPerfRecord(recordFile, true, 2999, { pid, event: recordEvent }) : undefined;
        const r = await load.run({ url: server.url, streams, maxOpen: empty ? 1 : undefined, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 120_000 });
        const sameCpu = placement();
        await record?.stop();
        const frames = empty ? r.completed : r.frames;
        const perfPerFrame = perf ? await perf(frames) : {};
        const after = procCounts(pid);
        const loadAfter = procCounts(loadPid);
        const ioAfter = procIo(pid);
        const loadIoAfter = procIo(loadPid);
        const threadsAfter = threadCpu(pid);
        const gc = await server.gcPauses();
        const faults = minorFaults(pid) - faultsBefore;
        if (r.completed !== streams || !before || !after || !loadBefore || !loadAfter) throw new Error(`${target}: ${r.completed} of ${streams} streams completed (${r.errors.join('; ')})`);
        const s = countsPer(before, after, frames);
        const l = countsPer(loadBefore, loadAfter, frames);
        const counts: Record<string, number> = {
          user: s.userUs,
          system: s.systemUs,
          mainThread: (threadsAfter.main - threadsBefore.main) / frames,
          otherThreads: (threadsAfter.others - threadsBefore.others) / frames,
          framesPerWrite: frames / (ioAfter.syscw - ioBefore.syscw),
          serverReads: (ioAfter.syscr - ioBefore.syscr) / frames,
          loadReads: (loadIoAfter.syscr - loadIoBefore.syscr) / frames,
          loadWaits: l.voluntarySwitches,
          serverWaits: s.voluntarySwitches,
          serverPreempted: s.involuntarySwitches,
          scavenges: gc.scavenges.length,
          scavengeMs: gc.scavenges.reduce((a, b) => a + b, 0),
          otherGcs: gc.others.length,
          otherGcMs: gc.others.reduce((a, b) => a + b, 0),
          youngMiBBefore: gcBefore.newSpaceCapacityBytes / 2 ** 20,
          youngMiBAfter: gc.newSpaceCapacityBytes / 2 ** 20,
          oldMiBAtStart: gcBefore.oldSpaceUsedBytes / 2 ** 20,
          oldFreeMiBAtStart: gcBefore.oldSpaceFreeBytes / 2 ** 20,
          faults: faults / frames,
          sameCpu,
          ...perfPerFrame,
        };
        const cpu = s.userUs + s.systemUs;
        lines.push({ target, round, cpu, counts });
        console.log(`${target} round ${round + 1}: ${cpu.toFixed(1)} µs per ${empty ? 'task' : 'frame'}, ${r.framesPerSec.toFixed(0)} frames/s, ${frames} ${empty ? 'tasks' : 'frames'}; ${describe(counts)}`);
      }
      console.log(`round ${round + 1} of ${rounds} done, load average ${loadavg()[0].toFixed(1)}`);
    }
  } finally {
    for (const server of servers.values()) await server.stop();
    await load.stop();
  }
  for (const target of targets) {
    const runs = lines.filter((x) => x.target === target).sort((a, b) => a.cpu - b.cpu);
    if (runs.length < 2) continue;
    // The two levels: split at the widest gap between neighbours in CPU per frame.
    let cut = 1;
    for (let i = 1; i < runs.length; i++) if (runs[i].cpu - runs[i - 1].cpu > runs[cut].cpu - runs[cut - 1].cpu) cut = i;
    for (const [name, level] of [
      ['cheaper', runs.slice(0, cut)],
      ['dearer', runs.slice(cut)],
    ] as const) {
      const med = Object.fromEntries(COUNT_NAMES.filter((k) => level[0].counts[k] !== undefined).map((k) => [k, median(level.map((x) => x.counts[k]))]));
      console.log(
        `${target} ${name} level: ${level.length} runs at ${level.map((x) => x.cpu.toFixed(1)).join(' ')} µs per frame (rounds ${level.map((x) => x.round + 1).join(' ')}); medians: ${describe(med)}`,
      );
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

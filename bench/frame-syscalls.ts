/**
 * `node -r ts-node/register/transpile-only bench/frame-syscalls.ts <streams> <toolCalls> [reps=2] [--targets=toolstream,limit] [--rounds=1]`
 *
 * What the kernel sees of a frame, per server: each round runs bench/frame-cost.ts once per
 * target (targets taking turns), and over its measured repetitions (after its warm-up) counts,
 * for the server's process (the load generator runs in a process of its own):
 * - with `perf stat` (tracepoints, every thread): system calls, all and by kind (writev,
 *   epoll_pwait, futex, the mmap family), context switches and page faults, for the main
 *   thread (the event loop) and the other threads (the GC's helpers, the compiler, libuv's pool)
 *   apart;
 * - from /proc: the bytes it handed to write system calls (`wchar`, the socket writes' bytes),
 *   its main thread's voluntary (it waited) and involuntary (it was preempted) context
 *   switches, and the load generator's main thread's voluntary switches (each a wait for the
 *   server's bytes that a socket write of the server then wakes);
 * each per frame. These do not move with the machine's load the way CPU time does (the
 * involuntary switches do: they grow with the CPU time and with whatever else runs). Needs Linux
 * and `perf` with tracepoint access (root here).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sumPerfStat } from './lib/perf-stat';
import { procIo } from './lib/proc-counts';

const EVENTS = [
  'raw_syscalls:sys_enter',
  'syscalls:sys_enter_writev',
  'syscalls:sys_enter_epoll_pwait',
  'syscalls:sys_enter_futex',
  'syscalls:sys_enter_mmap',
  'syscalls:sys_enter_munmap',
  'syscalls:sys_enter_madvise',
  'syscalls:sys_enter_mprotect',
  'context-switches',
  'page-faults',
];

interface ProcSnapshot {
  written: number;
  voluntary: number;
  involuntary: number;
  /** The load generator's main thread's voluntary switches: how often it waited for the server's bytes. */
  clientWaits: number;
}

const field = (text: string, key: string): number => Number(new RegExp(`^${key}:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? NaN);

function procSnapshot(pid: number): ProcSnapshot {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  // frame-cost.ts's one child process is the load generator.
  const clientWaits = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .split(' ')
    .filter(Boolean)
    .reduce((sum, child) => sum + field(readFileSync(`/proc/${child}/task/${child}/status`, 'utf8'), 'voluntary_ctxt_switches'), 0);
  return { written: procIo(pid).wchar, voluntary: field(status, 'voluntary_ctxt_switches'), involuntary: field(status, 'nonvoluntary_ctxt_switches'), clientWaits };
}

async function countRun(streams: number, toolCalls: number, reps: number, target: string): Promise<string> {
  const statFile = join(tmpdir(), `frame-syscalls-${process.pid}.csv`);
  rmSync(statFile, { force: true });
  const child = spawn(process.execPath, [...process.execArgv, join(__dirname, 'frame-cost.ts'), String(streams), String(toolCalls), String(reps), `--target=${target}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const childExit = once(child, 'exit');
  const pid = child.pid;
  if (pid === undefined) throw new Error('frame-cost.ts did not start');
  let perf: ReturnType<typeof spawn> | undefined;
  let before: ProcSnapshot | undefined;
  let after: ProcSnapshot | undefined;
  let frames = 0;
  let done = 0;
  const lines: string[] = [];
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      if (line.includes('warm-up done')) {
        before = procSnapshot(pid);
        perf = spawn('perf', ['stat', '--per-thread', '-x,', '-e', EVENTS.join(','), '-p', String(pid), '-o', statFile], { stdio: 'ignore' });
        // The first repetition has begun meanwhile: perf attaches within a few ms of it, and
        // misses that much (well under 1 % of a repetition of 1,000 × 100).
        continue;
      }
      const measured = /^frame-cost: (\d+) frames: (.*?); GC pauses/.exec(line);
      if (!measured) continue;
      frames += Number(measured[1]);
      lines.push(`  ${measured[2]}`);
      if (++done === reps && perf) {
        if (perf.exitCode !== null) throw new Error(`perf stat exited (${perf.exitCode})`);
        // Before the process ends (its threads' counts go with it) and before it shuts down.
        after = procSnapshot(pid);
        const exited = once(perf, 'exit');
        perf.kill('SIGINT');
        await exited;
      }
    }
  } catch (err) {
    // A failure here (perf, /proc) must not leave the server and its load generator running.
    if (child.exitCode === null) child.kill();
    if (perf && perf.exitCode === null) perf.kill('SIGINT');
    throw err;
  }
  const [code] = (await childExit) as [number | null];
  if (code !== 0 || !before || !after || frames === 0) throw new Error(`frame-cost.ts ${target} exited ${code} after ${done} of ${reps} repetitions`);
  const sums = sumPerfStat(readFileSync(statFile, 'utf8'), pid);
  rmSync(statFile, { force: true });
  const per = (n: number): string => (n / frames).toFixed(4);
  const rows = EVENTS.map((event) => {
    const sum = sums.get(event);
    return `  ${event.replace(/^(raw_)?syscalls:sys_enter_?/, 'syscalls ').padEnd(20)} main ${sum ? per(sum.main) : '-'}  others ${sum ? per(sum.others) : '-'}`;
  });
  return [
    `${target}: ${frames} frames, load average ${loadavg()[0].toFixed(1)}; per frame:`,
    ...lines,
    `  bytes written ${((after.written - before.written) / frames).toFixed(1)} (wchar); main thread's switches: voluntary ${per(after.voluntary - before.voluntary)}, involuntary ${per(after.involuntary - before.involuntary)}; the load generator's waits ${per(after.clientWaits - before.clientWaits)}`,
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [streams, toolCalls, reps = 2] = args.filter((a) => !a.startsWith('--')).map(Number);
  const option = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const targets = (option('targets') ?? 'toolstream,limit').split(',');
  const rounds = Number(option('rounds') ?? 1);
  if (!(streams > 0 && toolCalls > 0 && reps > 0 && rounds > 0)) {
    throw new Error('usage: bench/frame-syscalls.ts <streams> <toolCalls> [reps] [--targets=toolstream,limit] [--rounds=N]');
  }
  if (spawnSync('perf', ['--version']).status !== 0) throw new Error('perf is not available: apt-get install linux-perf');
  if (!existsSync('/proc/self/io')) throw new Error('needs Linux: /proc/<pid>/io and /proc/<pid>/task');
  for (let round = 0; round < rounds; round++) {
    // Who goes first alternates between rounds.
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) console.log(await countRun(streams, toolCalls, reps, target));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);

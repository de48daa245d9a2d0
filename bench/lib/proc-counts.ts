/**
 * What the kernel counts in /proc around a run: a process's user and system CPU (clock ticks,
 * every thread), its main thread's context switches and migrations between CPUs, and the
 * machine's context switches and interrupts. One stream's frames/s on this two-vCPU VM moves
 * with how often the loopback wakes the other process, for every server alike; these say which
 * way a run went (docs/performance.md, "How to read the figures"). Off Linux every reading is
 * undefined and the figures are left out.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on Linux. */
const TICK_US = 1e6 / 100;

export interface ProcCounts {
  /** The process's user and system CPU so far, in clock ticks (every thread). */
  userTicks: number;
  systemTicks: number;
  /** The machine's context switches and interrupts so far (/proc/stat). */
  contextSwitches: number;
  interrupts: number;
  /** The process's main thread (the event loop): context switches it asked for (waits) and was forced into, and moves between CPUs. */
  voluntarySwitches: number;
  involuntarySwitches: number;
  migrations: number;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The counts so far of process `pid` and of the machine; undefined without /proc (or the process). */
export function procCounts(pid: number | undefined): ProcCounts | undefined {
  if (pid === undefined) return undefined;
  const stat = read(`/proc/${pid}/stat`);
  const machine = read('/proc/stat');
  const sched = read(`/proc/${pid}/sched`) ?? '';
  if (stat === undefined || machine === undefined) return undefined;
  // Fields 14 and 15 of /proc/<pid>/stat, counted after the parenthesised command name.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  const total = (key: string): number => Number(new RegExp(`^${key} (\\d+)`, 'm').exec(machine)?.[1] ?? NaN);
  const field = (key: string): number => Number(new RegExp(`^${key.replace(/\./g, '\\.')}\\s*:\\s*(\\d+)`, 'm').exec(sched)?.[1] ?? NaN);
  return {
    userTicks: Number(fields[11]),
    systemTicks: Number(fields[12]),
    contextSwitches: total('ctxt'),
    interrupts: total('intr'),
    voluntarySwitches: field('nr_voluntary_switches'),
    involuntarySwitches: field('nr_involuntary_switches'),
    migrations: field('se.nr_migrations'),
  };
}

/** The process's CPU so far in µs, as process.cpuUsage() gives it (to a clock tick, 10 ms). */
export function cpuUsageOf(counts: ProcCounts): { userUs: number; systemUs: number } {
  return { userUs: counts.userTicks * TICK_US, systemUs: counts.systemTicks * TICK_US };
}

/** From `a` to `b`, per `per` (frames or tasks): the process's CPU in µs, and the counts. */
export interface CountsPer {
  userUs: number;
  systemUs: number;
  contextSwitches: number;
  interrupts: number;
  voluntarySwitches: number;
  involuntarySwitches: number;
  migrations: number;
}

export function countsPer(a: ProcCounts, b: ProcCounts, per: number): CountsPer {
  const d = (k: keyof ProcCounts): number => (b[k] - a[k]) / per;
  return {
    userUs: d('userTicks') * TICK_US,
    systemUs: d('systemTicks') * TICK_US,
    contextSwitches: d('contextSwitches'),
    interrupts: d('interrupts'),
    voluntarySwitches: d('voluntarySwitches'),
    involuntarySwitches: d('involuntarySwitches'),
    migrations: d('migrations'),
  };
}

export function describeCounts(a: ProcCounts, b: ProcCounts, per: number, unit: string): string {
  const c = countsPer(a, b, per);
  return (
    `user ${c.userUs.toFixed(1)} µs, system ${c.systemUs.toFixed(1)} µs per ${unit}; ` +
    `machine: ${c.contextSwitches.toFixed(2)} context switches, ${c.interrupts.toFixed(2)} interrupts per ${unit}`
  );
}

/** CPU (µs) of a process's main thread and of its other threads (the compiler's, the GC's, libuv's), as /proc counts them (Linux). */
export function threadCpu(pid: number): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    // Fields after the command name: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    const us = (Number(fields[11]) + Number(fields[12])) * TICK_US;
    if (tid === String(pid)) main += us;
    else others += us;
  }
  return { main, others };
}

/** Minor page faults of a process so far (/proc/<pid>/stat, its 10th field): the heap taking new pages. */
export function minorFaults(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[7]);
}

/**
 * Time the process's threads (all of them) have spent runnable but waiting for a CPU so far, in
 * µs: the second field of each /proc/<pid>/task/<tid>/schedstat (ns). On this shared two-vCPU VM
 * a paced row's p99 follows it (docs/deploying.md, "Performance in Redis mode"). A thread that
 * ended meanwhile takes its share with it. Undefined without /proc or schedstats.
 */
export function runQueueWaitUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
    } catch {
      // A thread that ended between the listing and its read.
    }
  }
  return Number.isFinite(ns) ? ns / 1000 : undefined;
}

/** A process's read and write system calls and the bytes it handed to writes so far (/proc/<pid>/io). */
export function procIo(pid: number): { syscr: number; syscw: number; wchar: number } {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (key: string): number => Number(new RegExp(`^${key}:\\s*(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { syscr: field('syscr'), syscw: field('syscw'), wchar: field('wchar') };
}

/** The CPU a process's main thread last ran on (/proc/<pid>/stat, field 39); undefined once it is gone. */
function lastCpu(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  return stat === undefined ? undefined : Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[36]);
}

/** Samples, every `everyMs` until stopped, whether two processes' main threads last ran on one CPU: the share of samples that did. */
export function sampleSameCpu(a: number, b: number, everyMs: number): () => number {
  let same = 0;
  let all = 0;
  const timer = setInterval(() => {
    const x = lastCpu(a);
    const y = lastCpu(b);
    if (x === undefined || y === undefined) return;
    all += 1;
    if (x === y) same += 1;
  }, everyMs);
  return () => {
    clearInterval(timer);
    return all === 0 ? NaN : same / all;
  };
}

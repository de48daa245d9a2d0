/**
 * Linux `perf record` around part of a bench script: samples this process (every thread, kernel
 * included) on the software CPU clock, which works on this VM (no hardware counters here). V8's
 * own profiler sees only the main thread's JavaScript and counts time waiting in a system call as
 * that call's; perf counts CPU time only, wherever it is spent: the kernel, the GC's helper
 * threads, the compiler's. For JavaScript names node must run with `--perf-basic-prof` (the map
 * file perf reads is written as code is compiled). bench/perf-split.ts summarises the file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, statSync } from 'node:fs';

export interface PerfRecording {
  /** Stops perf (SIGINT: it writes its file and exits) and waits for it. */
  stop(): Promise<void>;
}

/** Whether `perf` can be run here; the reason when not. */
function perfMissing(): string | undefined {
  const probe = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `perf is not available (${probe.error?.message ?? probe.stderr.trim()}): apt-get install linux-perf`;
}

/** Another process to record, or another event: `page-faults` records every fault (`-c 1`) instead of sampling at `hz`. */
export interface PerfTarget {
  pid?: number;
  event?: 'cpu-clock' | 'page-faults';
}

/**
 * Starts sampling this process (or `target.pid`) into `file` (`callGraph`: with call chains,
 * `-g`) on the software clock or on `target.event`; resolves once perf has attached.
 */
export async function startPerfRecord(file: string, callGraph = false, hz = 4999, target: PerfTarget = {}): Promise<PerfRecording> {
  const missing = perfMissing();
  if (missing) throw new Error(missing);
  const pid = target.pid ?? process.pid;
  if (pid === process.pid && !process.execArgv.includes('--perf-basic-prof')) console.warn('perf-record: node runs without --perf-basic-prof: JavaScript frames will have no names');
  // A file left by an earlier recording would read as this one's header before perf attached.
  rmSync(file, { force: true });
  const sampling = target.event === 'page-faults' ? ['-e', 'page-faults', '-c', '1'] : [...(target.event ? ['-e', target.event] : []), '-F', String(hz)];
  const args = ['record', ...sampling, ...(callGraph ? ['-g'] : []), '-p', String(pid), '-o', file];
  const perf: ChildProcess = spawn('perf', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  perf.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // perf writes its file's header once it has attached to the process.
  for (let waited = 0; ; waited += 20) {
    if (perf.exitCode !== null) throw new Error(`perf record exited (${perf.exitCode}): ${stderr.trim()}`);
    if (sizeOf(file) > 0) break;
    if (waited > 10_000) throw new Error('perf record did not start within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    stop: async () => {
      if (perf.exitCode !== null) return;
      const exited = once(perf, 'exit');
      perf.kill('SIGINT');
      await exited;
    },
  };
}

/** A script's `--perf=FILE[,g]` option (undefined: no recording): the file, and `g` for call chains. */
export function startPerfRecordOption(option: string | undefined): Promise<PerfRecording | undefined> {
  if (!option) return Promise.resolve(undefined);
  const [file, graph] = option.split(',');
  return startPerfRecord(file, graph === 'g');
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

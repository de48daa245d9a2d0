/**
 * `node -r ts-node/register/transpile-only bench/empty-placement.ts [rounds] [tasks] [--pin=same,apart,none] [--targets=toolstream,limit]`
 *
 * Whether where the scheduler puts a server and the load generator moves the empty task's CPU.
 * The empty-task section's servers (compiled, in processes of their own, warmed as the section
 * warms them: 12,000 empty tasks, taking turns), then `rounds` rounds; in each the placement is
 * the next of `--pin` and every server serves one run of `tasks` empty tasks (the section's
 * 1,200), in the order given, reversed every other round (A B, B A, …: a drift of the machine
 * between two runs is shared by the pair). `same` pins (taskset, every thread) the server and
 * the load generator to one CPU, `apart` to one each (which CPU swaps every other round),
 * `none` leaves both to the scheduler (the section's case) and reads where they ran: a sampler
 * reads each process's CPU from /proc every 2 ms during the run (`same CPU` is the share of
 * samples in which the server's main thread and the load generator's last ran on one CPU).
 * Each run prints the server's CPU per task (user, system; main thread, other threads), its
 * context switches per task (voluntary / involuntary, main thread), and each round the ratio of
 * the first target to the second. One stream of empty tasks is a ping-pong of two processes; on
 * one CPU they take turns on its caches, on two each wakes the other across CPUs.
 */
import { loadavg } from 'node:os';
import type { Target } from './lib/ipc';
import { pinToCpus } from './lib/pin-to-cpus';
import { countsPer, sampleSameCpu, threadCpu } from './lib/proc-counts';
import { warmUpEmptyTaskServers } from './lib/warm-up-empty-task-servers';
import { withServerPool } from './lib/with-server-pool';
import { emptyRun } from './sections/empty-task';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string): string => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
  const [rounds = 12, tasks = 1200] = args.filter((a) => !a.startsWith('--')).map(Number);
  const modes = option('pin', 'same,apart').split(',');
  const targets = option('targets', 'toolstream,limit').split(',') as Target[];
  await withServerPool(targets, {}, async (pool) => {
    await warmUpEmptyTaskServers(pool, targets);
    const pids = new Map<Target, number>();
    for (const target of targets) pids.set(target, (await pool.server(target)).pid as number);
    const loadPid = pool.load.pid as number;
    const byMode = new Map<string, Map<Target, number[]>>();
    const ratios = new Map<string, number[]>();
    for (let r = 0; r < rounds; r++) {
      const mode = modes[r % modes.length];
      const k = Math.floor(r / modes.length) % 2;
      const order = r % 2 === 0 ? targets : [...targets].reverse();
      const perTask = new Map<Target, number>();
      for (const target of order) {
        const pid = pids.get(target) as number;
        if (mode === 'none') {
          pinToCpus(pid, '0,1');
          pinToCpus(loadPid, '0,1');
        } else {
          pinToCpus(pid, String(k));
          pinToCpus(loadPid, String(mode === 'same' ? k : 1 - k));
        }
        const threads = threadCpu(pid);
        const stopSampling = sampleSameCpu(pid, loadPid, 2);
        const { run, cpuPerTaskUs: us } = await emptyRun(pool, target, tasks);
        const sameCpu = stopSampling();
        const after = threadCpu(pid);
        perTask.set(target, us);
        const c = run.counts;
        const sw = c ? countsPer(c.server.before, c.server.after, tasks) : undefined;
        const per = (v: number | undefined): string => (v === undefined ? '?' : (v / tasks).toFixed(0));
        console.log(
          `round ${r + 1} ${mode}${mode === 'none' ? '' : ` (server on ${k}, load generator on ${mode === 'same' ? k : 1 - k})`} ${target}: ` +
            `${us.toFixed(0)} µs per task (user ${per(c?.serverUserUs)}, system ${per(c?.serverSystemUs)}; main ${per(after.main - threads.main)}, others ${per(after.others - threads.others)}), ` +
            `switches ${sw?.voluntarySwitches.toFixed(2) ?? '?'} / ${sw?.involuntarySwitches.toFixed(2) ?? '?'} per task, same CPU ${sameCpu.toFixed(2)}, ` +
            `${((1000 * run.result.elapsedMs) / tasks).toFixed(0)} µs wall per task, load ${loadavg()[0].toFixed(2)}`,
        );
        const seen = byMode.get(mode) ?? new Map<Target, number[]>();
        seen.set(target, [...(seen.get(target) ?? []), us]);
        byMode.set(mode, seen);
      }
      const ratio = (perTask.get(targets[0]) ?? NaN) / (perTask.get(targets[1]) ?? NaN);
      ratios.set(mode, [...(ratios.get(mode) ?? []), ratio]);
      console.log(`round ${r + 1} ${mode}: ${targets[0]} / ${targets[1]} ${ratio.toFixed(2)}`);
    }
    const spread = (v: number[], digits: number): string => {
      const s = [...v].sort((a, b) => a - b);
      return `${s[0].toFixed(digits)} / ${s[s.length >> 1].toFixed(digits)} / ${s[s.length - 1].toFixed(digits)}`;
    };
    for (const [mode, seen] of byMode) {
      console.log(
        `${mode}: ${[...seen].map(([t, v]) => `${t} ${spread(v, 0)} µs`).join(', ')}; ${targets[0]} / ${targets[1]} ${spread(ratios.get(mode) ?? [], 2)} (min / median / max)`,
      );
    }
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

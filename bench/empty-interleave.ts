/**
 * `node -r ts-node/register/transpile-only bench/empty-interleave.ts [rounds] [tasks] [pieces] [--targets=toolstream,limit]`
 *
 * How the empty-task ratio's spread depends on how the two servers' runs are placed in time.
 * The empty task's CPU per task moves with the machine's state (docs/performance.md, "How the
 * empty task is measured", twenty-first round: every server's windows rise and fall together, on
 * a scale of seconds), so a ratio of two runs taken one after the other reads that state's change
 * as well. Both servers are warmed as the empty-task section warms them; then rounds take turns
 * between two ways of measuring the same `tasks` per server: `coarse`, the section's (an
 * uncounted run and a counted run of `tasks` for the first target, then the same for the second)
 * and `fine` (the uncounted runs, then `pieces` pieces of `tasks / pieces` per server in an
 * A B B A … order, a server's figure being its CPU over all its pieces). Each round prints the
 * two servers' CPU per task and the ratio, and the end each way's ratios as min / median / max
 * with the spread (max / min).
 */
import { loadavg } from 'node:os';
import type { Target } from './lib/ipc';
import { warmUpEmptyTaskServers } from './lib/warm-up-empty-task-servers';
import { withServerPool } from './lib/with-server-pool';
import { emptyRun } from './sections/empty-task';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: string): string => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
  const [rounds = 12, tasks = 1200, pieces = 12] = args.filter((a) => !a.startsWith('--')).map(Number);
  const [a, b] = option('targets', 'toolstream,limit').split(',') as Target[];
  await withServerPool([a, b], {}, async (pool) => {
    /** Server CPU µs of `n` empty tasks on `target`. */
    const cpu = async (target: Target, n: number): Promise<number> => (await emptyRun(pool, target, n)).run.serverCpuUs;
    await warmUpEmptyTaskServers(pool, [a, b]);
    const ratios = { coarse: [] as number[], fine: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      const way = r % 2 === 0 ? 'coarse' : 'fine';
      // Which server goes first swaps every two rounds, so each way has each order as often.
      const [first, second] = Math.floor(r / 2) % 2 === 0 ? [a, b] : [b, a];
      const used = new Map<Target, number>([
        [a, 0],
        [b, 0],
      ]);
      if (way === 'coarse') {
        for (const t of [first, second]) {
          await cpu(t, tasks);
          used.set(t, await cpu(t, tasks));
        }
      } else {
        for (const t of [first, second]) await cpu(t, tasks);
        const piece = Math.round(tasks / pieces);
        for (let p = 0; p < pieces; p++) {
          const order = p % 2 === 0 ? [first, second] : [second, first];
          for (const t of order) used.set(t, (used.get(t) ?? 0) + (await cpu(t, piece)));
        }
      }
      const perTask = (t: Target): number => (used.get(t) ?? NaN) / tasks;
      const ratio = perTask(a) / perTask(b);
      ratios[way].push(ratio);
      console.log(`round ${r + 1} ${way} (${first} first): ${a} ${perTask(a).toFixed(0)} µs, ${b} ${perTask(b).toFixed(0)} µs per task, ${a} / ${b} ${ratio.toFixed(2)}, load ${loadavg()[0].toFixed(2)}`);
    }
    for (const [way, v] of Object.entries(ratios)) {
      const s = [...v].sort((x, y) => x - y);
      console.log(`${way}: ${a} / ${b} ${s[0].toFixed(2)} / ${s[s.length >> 1].toFixed(2)} / ${s[s.length - 1].toFixed(2)} (min / median / max), max / min ${(s[s.length - 1] / s[0]).toFixed(2)}, ${s.length} rounds`);
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

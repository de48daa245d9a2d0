/**
 * `node -r ts-node/register/transpile-only bench/ab-servers.ts <rounds> <toolCalls> <streams> <server>...`
 *
 * A/B of servers side by side in one sitting: each `<server>` is `[checkout:]target[ flag,flag]`,
 * e.g. `/tmp/before:toolstream`, `toolstream --max-semi-space-size=64` or
 * `limit --trace-gc-nvp` (a checkout is a directory with this repository's files, e.g. a `git
 * archive` copy with node_modules linked; without one, this checkout). All are started and warmed
 * up, then every round runs the same job (`streams` streams of `toolCalls` calls each) on each
 * server in turn, rotating who goes first; it prints each server's CPU per frame and frames/s,
 * min / median / max over the rounds, with every round's CPU per frame. The load average moves
 * the figures a lot on a shared machine: compare servers of one run, never runs.
 *
 * `toolCalls` 0 is the empty task as the empty-task section measures it: the servers run
 * compiled, each serves `--warm=N` uncounted empty tasks first (10,000 by default, as the full
 * run's warm-up), then every round sends `streams` empty tasks one after another to each, and
 * the figures are server CPU per task.
 *
 * `--interval=<ms>` paces the tool calls (a call every `ms` per stream, as the side-by-side
 * section's latency rows: `4 100 1000 … --interval=50` is its paced 1,000-stream row) and adds
 * each server's p99 publish-to-client latency, min / median / max over the rounds.
 *
 * `--compiled` runs every server compiled, as a full bench run does (without it, servers of
 * runs with tool calls load through ts-node). `--counts` prints, per server per round, its user
 * and system CPU per frame (or task) and the machine's context switches and interrupts per frame
 * (/proc): one stream's frames/s moves with how often the loopback wakes the other process, for
 * every server alike, and these say which way a round went.
 */
import { loadavg } from 'node:os';
import { LoadProcess, type ServerProcess } from './lib/processes';
import { countsPer, describeCounts, procCounts } from './lib/proc-counts';
import { spread } from './lib/stats';
import { parseVariant, serverProcessOf } from './server-variant';

async function main(): Promise<void> {
  const [rounds, toolCalls, streams] = process.argv.slice(2, 5).map(Number);
  const empty = toolCalls === 0;
  const option = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const warm = Number(option('warm') ?? 10_000);
  const intervalMs = Number(option('interval') ?? 0);
  const compiled = empty || process.argv.includes('--compiled');
  const counts = process.argv.includes('--counts');
  const variants = process.argv
    .slice(5)
    .filter((a) => !a.startsWith('--'))
    .map(parseVariant);
  if (!(rounds > 0 && toolCalls >= 0 && streams > 0) || variants.length === 0) {
    throw new Error('usage: bench/ab-servers.ts <rounds> <toolCalls> <streams> <[checkout:]target[ flag,flag]>... [--warm=N] [--interval=<ms>] [--compiled] [--counts]');
  }
  const unit = empty ? 'task' : 'frame';
  const load = await LoadProcess.start();
  const servers: ServerProcess[] = [];
  const cpu = variants.map((): number[] => []);
  const fps = variants.map((): number[] => []);
  const p99 = variants.map((): number[] => []);
  try {
    for (const v of variants) servers.push(await serverProcessOf(v.checkout, compiled).start(v.target, {}, v.flags));
    for (const server of servers) {
      await load.run({ url: server.url, streams: 20, maxOpen: 4, scenario: { toolCalls: 500, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
      if (empty) await load.run({ url: server.url, streams: warm, maxOpen: 1, scenario: { toolCalls: 0, intervalMs: 0, idle: false }, timeLimitMs: 600_000 });
    }
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < servers.length; k++) {
        const i = (k + round) % servers.length;
        const before = counts ? procCounts(servers[i].pid) : undefined;
        const loadBefore = counts ? procCounts(load.pid) : undefined;
        const c0 = await servers[i].cpuUs();
        const r = await load.run({ url: servers[i].url, streams, maxOpen: empty ? 1 : undefined, scenario: { toolCalls, intervalMs, idle: false }, timeLimitMs: 120_000 });
        const used = (await servers[i].cpuUs()) - c0;
        const after = before && procCounts(servers[i].pid);
        const loadAfter = loadBefore && procCounts(load.pid);
        if (r.completed !== streams) throw new Error(`${variants[i].label}: ${r.completed} of ${streams} streams completed (${r.errors.join('; ')})`);
        const per = empty ? r.completed : r.frames;
        cpu[i].push(used / per);
        if (before && after) {
          const s = countsPer(before, after, per);
          const l = loadBefore && loadAfter ? countsPer(loadBefore, loadAfter, per) : undefined;
          console.log(
            `  ${variants[i].label}: ${describeCounts(before, after, per, unit)}; server main thread ${s.voluntarySwitches.toFixed(2)} + ${s.involuntarySwitches.toFixed(2)} forced switches, ` +
              `${(s.migrations * per).toFixed(0)} migrations` +
              (l ? `; load ${l.voluntarySwitches.toFixed(2)} + ${l.involuntarySwitches.toFixed(2)} forced switches, ${(l.migrations * per).toFixed(0)} migrations` : '') +
              `; ${r.framesPerSec.toFixed(0)} frames/s, ${(r.elapsedMs / 1000).toFixed(2)} s`,
          );
        }
        fps[i].push(r.framesPerSec);
        p99[i].push(r.latency.p99Ms);
      }
      console.log(`round ${round + 1} of ${rounds} done, load average ${loadavg()[0].toFixed(1)}`);
    }
  } finally {
    for (const server of servers) await server.stop();
    await load.stop();
  }
  variants.forEach((v, i) => {
    const c = spread(cpu[i]);
    const f = spread(fps[i]);
    const l = spread(p99[i]);
    console.log(
      `${v.label}: server CPU per ${unit} ${c.min.toFixed(1)} / ${c.median.toFixed(1)} / ${c.max.toFixed(1)} µs ` +
        (empty ? '' : `, ${f.min.toFixed(0)} / ${f.median.toFixed(0)} / ${f.max.toFixed(0)} frames/s `) +
        (intervalMs > 0 ? `, p99 ${l.min.toFixed(2)} / ${l.median.toFixed(2)} / ${l.max.toFixed(2)} ms ` : '') +
        `(min / median / max; CPU per round: ${cpu[i].map((x) => x.toFixed(1)).join(' ')})`,
    );
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

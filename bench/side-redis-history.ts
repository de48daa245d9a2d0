/**
 * `node -r ts-node/register/transpile-only bench/side-redis-history.ts [variants=used,fresh] [reps=3] [--idle-after-curves=<s>] [--idle-between=<s>] [--warm=<streams>x<calls>[@<ms>]] [--warm-until-full] [--server-flags=<flag,flag>]`
 *
 * Whether what the side section's Redis row has behind it moves its p99: the same paced row
 * (100 streams, a tool call every 50 ms, 100 calls each, the warm-up right before each
 * repetition as both sections do) on toolstream-redis servers and redis-servers with different
 * histories. Each variant gets a redis-server and a server of its own; variants run in the order
 * given (give them twice, or run the command again, to take turns):
 * - `used`: the server and Redis first serve what the full run's curves section gives
 *   toolstream-redis (50, 5, 2 and 1 tasks of 100, 1,000, 3,000 and 10,000 calls, one stream at a
 *   time, three repetitions), then idle `--idle-after-curves` seconds (default 0; the side
 *   section's throughput rows leave this server alone for ~100 s), as the side row's server;
 * - `fresh-server`: the same history in Redis, then a new server (warmed as the pool warms every
 *   server) on that Redis: what the old server kept, apart from Redis;
 * - `fresh`: a new server on an empty Redis, as the redis section's row.
 * `--idle-between` leaves the server idle before each repetition's warm-up (the side row's
 * server idles ~20 s through the other targets' paced runs; the redis row's ~5 s). `--warm`
 * replaces the pool's warm-up (20 tasks of 500 calls, 4 open at a time, flat out) by that many
 * streams open at once, of that many calls (with that interval, default flat out);
 * `--warm-until-full` repeats the warm-up (up to 6 times) until the young generation is back at
 * its largest. Per repetition it prints the p99 (and by tenths of each task's frames), the
 * server's CPU per frame and on other threads, its GC (scavenges, the other GCs with their
 * pauses), its old space used and free and its young generation at the start, the run-queue
 * waits, and from Redis: used memory and keys at the start, keys expired and evicted during the
 * run, the LATENCY monitor's events over 5 ms and the µs per frame of the commands that took most
 * (INFO commandstats). At a load of several cores' worth the p99s measure the machine; the counts
 * do not.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type Redis from 'ioredis';
import { gcSummary, type GcDuringRun } from './lib/gc-pauses';
import { commandTimes } from './lib/redis-command-times';
import { FRAMES_PER_TOOL_CALL } from './lib/scenario';
import { runRecord } from './lib/server-pool';
import { withRedisServerPool } from './lib/with-redis-server-pool';

type Variant = 'used' | 'fresh-server' | 'fresh';

/** The full config's toolstream-redis curve: its points, the frames per repetition, its repetitions. */
const CURVE_POINTS = [100, 1_000, 3_000, 10_000];
const CURVE_FRAMES = 10_000;
const CURVE_REPS = 3;

/** The warm-up before each repetition (see `--warm` above). */
interface Warm {
  streams: number;
  calls: number;
  intervalMs: number;
  maxOpen?: number;
}

function warmOf(text: string | undefined): Warm {
  if (!text) return { streams: 20, calls: 500, intervalMs: 0, maxOpen: 4 };
  const [shape, interval] = text.split('@');
  const [streams, calls] = shape.split('x').map(Number);
  return { streams, calls, intervalMs: Number(interval ?? 0) };
}

function option(name: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function field(info: string, name: string): number {
  return Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
}

async function redisState(client: Redis): Promise<{ usedMiB: number; keys: number; expired: number; evicted: number }> {
  const [memory, stats, keyspace] = await Promise.all([client.info('memory'), client.info('stats'), client.info('keyspace')]);
  return {
    usedMiB: field(memory, 'used_memory') / 2 ** 20,
    keys: Number(/^db0:keys=(\d+)/m.exec(keyspace)?.[1] ?? 0),
    expired: field(stats, 'expired_keys'),
    evicted: field(stats, 'evicted_keys'),
  };
}

async function variant(name: Variant, reps: number, idleAfterCurvesS: number, idleBetweenS: number, serverFlags: string[], warmUntilFull: boolean, warm: Warm): Promise<void> {
  const target = 'toolstream-redis';
  await withRedisServerPool([target], serverFlags, async ({ pool, client }) => {
    await client.config('SET', 'latency-monitor-threshold', '5');
    if (name !== 'fresh') {
      const t0 = Date.now();
      for (let rep = 0; rep < CURVE_REPS; rep++) {
        for (const toolCalls of CURVE_POINTS) {
          const tasks = Math.max(1, Math.round(CURVE_FRAMES / (toolCalls * FRAMES_PER_TOOL_CALL)));
          const run = await pool.run(target, tasks, { toolCalls, intervalMs: 0, idle: false }, 120_000, 1);
          if (run.result.completed < tasks) throw new Error(`curve ${toolCalls}: ${tasks - run.result.completed} tasks did not complete`);
        }
      }
      const s = await redisState(client);
      console.log(`${name}: curves replayed in ${((Date.now() - t0) / 1000).toFixed(0)} s; Redis ${s.usedMiB.toFixed(1)} MiB, ${s.keys} keys`);
      if (name === 'fresh-server') await pool.retire(target);
      if (idleAfterCurvesS > 0) await sleep(idleAfterCurvesS * 1000);
    }
    for (let rep = 0; rep < reps; rep++) {
      if (idleBetweenS > 0) await sleep(idleBetweenS * 1000);
      const scenario = { toolCalls: 100, intervalMs: 50, idle: false };
      // A server the pool has just started was warmed already.
      const justStarted = rep === 0 && name === 'fresh-server';
      const server = await pool.server(target);
      let warmUps = 0;
      let heap = await server.gcPauses();
      // The warm-up here rather than through pool.run's warmFirst, so that Redis's counters below
      // cover only the run. Node 20's young generation is at most 15.7 MiB (16 MiB semi-spaces).
      while (!justStarted && (warmUps === 0 || (warmUntilFull && warmUps < 6 && heap.newSpaceCapacityBytes < 15 * 2 ** 20))) {
        await pool.run(target, warm.streams, { toolCalls: warm.calls, intervalMs: warm.intervalMs, idle: false }, 60_000, warm.maxOpen);
        warmUps += 1;
        heap = await server.gcPauses();
      }
      await client.config('RESETSTAT');
      await client.call('LATENCY', 'RESET');
      const before = await redisState(client);
      const measured = await pool.run(target, 100, scenario, 60_000, undefined, { watchGc: true });
      const after = await redisState(client);
      const r = runRecord(measured, rep, scenario);
      const gc = measured.gc as GcDuringRun;
      const latency = ((await client.call('LATENCY', 'LATEST')) as [string, number, number, number][]).map(([event, , last, max]) => `${event} ${last}/${max} ms`);
      const times = await commandTimes(client);
      const w = r.runQueueWaitMs;
      const phases = measured.result.latency.byPhase;
      const phase = phases ? `${phases.first.p99Ms.toFixed(1)} / ${phases.middle.p99Ms.toFixed(1)} / ${phases.last.p99Ms.toFixed(1)}` : '-';
      console.log(
        `${name} rep ${rep} (${warmUps} warm-ups): p50 ${r.latencyP50Ms.toFixed(2)} p99 ${r.latencyP99Ms.toFixed(2)} ms (tenths ${phase}), server ${r.serverCpuPerFrameUs.toFixed(1)} µs/frame, other threads ${((measured.serverOtherThreadsUs ?? NaN) / 1000).toFixed(0)} ms, ` +
          `GC ${gcSummary(gc)} [others ${gc.others.map((ms) => ms.toFixed(1)).join(' ')}], old space used ${(heap.oldSpaceUsedBytes / 2 ** 20).toFixed(1)} free ${(heap.oldSpaceFreeBytes / 2 ** 20).toFixed(1)} MiB, ` +
          `young ${(gc.newSpaceBytesAtStart / 2 ** 20).toFixed(1)} → ${(gc.newSpaceBytesAtEnd / 2 ** 20).toFixed(1)} MiB; waited server ${Math.round(w?.server ?? NaN)} Redis ${Math.round(w?.redis ?? NaN)} ms; ` +
          `Redis ${before.usedMiB.toFixed(1)} MiB ${before.keys} keys, expired ${after.expired - before.expired}, evicted ${after.evicted - before.evicted}, latency events [${latency.join(', ')}], ` +
          `µs/frame ${times
            .slice(0, 4)
            .map(([cmd, us]) => `${cmd} ${(us / r.frames).toFixed(1)}`)
            .join(', ')}; load ${r.loadAverage.toFixed(1)}`,
      );
    }
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const variants = (args[0] ?? 'used,fresh').split(',') as Variant[];
  const reps = Number(args[1] ?? 3);
  const serverFlags = (option('server-flags') ?? '').split(',').filter(Boolean);
  for (const v of variants) await variant(v, reps, Number(option('idle-after-curves') ?? 0), Number(option('idle-between') ?? 0), serverFlags, process.argv.includes('--warm-until-full'), warmOf(option('warm')));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

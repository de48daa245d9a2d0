/**
 * `node -r ts-node/register/transpile-only bench/paced-latency.ts [toolCalls=100] [reps=3] [targets=toolstream-redis]`
 *
 * The redis section's latency row alone, for A/B runs of the Redis path: 100 paced streams
 * (a tool call every 50 ms each) of `toolCalls` calls, `reps` times per target (comma-separated
 * targets take turns), on a redis-server of its own. Prints each repetition's p50 / p99
 * publish-to-client latency, the p99 of the first, middle and last tenth of each task's frames,
 * server CPU per frame, and Redis socket reads per frame (INFO total_reads_processed: fewer when
 * commands share writes). Run it from `git archive` copies of the two commits, alternately.
 */
import Redis from 'ioredis';
import type { Target } from './lib/ipc';
import { compileChildren } from './lib/compile-children';
import { LoadProcess, useCompiledChildren } from './lib/processes';
import { BenchRedis } from './lib/redis';
import { runRecord, ServerPool } from './lib/server-pool';

async function readsProcessed(client: Redis): Promise<number> {
  return Number(/total_reads_processed:(\d+)/.exec(await client.info('stats'))?.[1] ?? NaN);
}

async function main(): Promise<void> {
  const toolCalls = Number(process.argv[2] ?? 100);
  const reps = Number(process.argv[3] ?? 3);
  const targets = (process.argv[4] ?? 'toolstream-redis').split(',') as Target[];
  // The servers and the load run as compiled JavaScript, as in `npm run bench`.
  useCompiledChildren(compileChildren());
  const redis = await BenchRedis.start();
  if (!redis) throw new Error('redis-server is not installed');
  process.env.BENCH_REDIS_URL = redis.url;
  const client = new Redis(redis.url);
  const load = await LoadProcess.start();
  const pool = new ServerPool(load, redis);
  try {
    await pool.prepare(targets);
    for (let rep = 0; rep < reps; rep++) {
      for (const target of targets) {
        const scenario = { toolCalls, intervalMs: 50, idle: false };
        const readsBefore = await readsProcessed(client);
        const measured = await pool.run(target, 100, scenario, 60_000);
        const r = runRecord(measured, rep, scenario);
        const phases = measured.result.latency.byPhase;
        const phase = phases ? `${phases.first.p99Ms.toFixed(2)} / ${phases.middle.p99Ms.toFixed(2)} / ${phases.last.p99Ms.toFixed(2)}` : '-';
        console.log(
          `${target} rep ${rep}: p50 ${r.latencyP50Ms.toFixed(2)} ms, p99 ${r.latencyP99Ms.toFixed(2)} ms (first / middle / last tenth: ${phase}), ` +
            `server CPU ${r.serverCpuPerFrameUs.toFixed(1)} µs/frame, Redis reads ${(((await readsProcessed(client)) - readsBefore) / r.frames).toFixed(3)}/frame, load ${r.loadAverage.toFixed(1)}`,
        );
      }
    }
  } finally {
    client.disconnect();
    await pool.stopAll();
    await load.stop();
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

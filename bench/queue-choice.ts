/**
 * Why the Redis run queue is a Redis Streams consumer group and not BullMQ: both measured side by
 * side on one redis-server of the script's own (free loopback port, no persistence), in turns.
 *
 * - enqueue→start latency: one run at a time, from the producer's add to the worker's handler
 *   (both in this process, so one clock), 200 runs per round;
 * - runs/s: 2,000 runs added at once, drained by one worker at concurrency 32.
 *
 * Each run is empty work. The Streams side does what RedisRunQueue does per run: XREADGROUP
 * (blocking), a lease in a sorted set (one EVAL, as TAKE_OVER_SCRIPT), XACK + XDEL. BullMQ does its
 * own: Queue.add, a Worker with its lock (lease) and its completion bookkeeping.
 *
 * Run: `npm run bench:queue-choice` (prints min/median/max over 3 rounds).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { startRedis } from '../test/support/redis-server';

const ROUNDS = 3;
const LATENCY_RUNS = 200;
const THROUGHPUT_RUNS = 2_000;
const CONCURRENCY = 32;

interface RoundResult {
  latenciesMs: number[];
  runsPerSec: number;
}

function spread(values: number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] };
}

const fmt = (s: { min: number; median: number; max: number }, digits = 2): string =>
  `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;

/** The consumer-group queue as RedisRunQueue uses it. */
async function streamsRound(url: string): Promise<RoundResult> {
  const prefix = `bench:${randomUUID()}:`;
  const key = `${prefix}runs`;
  const producer = new Redis(url);
  const reader = new Redis(url);
  const worker = new Redis(url);
  await producer.xgroup('CREATE', key, 'workers', '0', 'MKSTREAM');
  const lease = "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) return 1";
  const started = new Map<string, number>();
  let handled = 0;
  let stop = false;
  let onHandled: (() => void) | undefined;
  const loop = (async () => {
    while (!stop) {
      const reply = (await reader.xreadgroup('GROUP', 'workers', 'w1', 'COUNT', CONCURRENCY, 'BLOCK', 100, 'STREAMS', key, '>')) as [string, [string, string[]][]][] | null;
      const entries = reply?.[0]?.[1] ?? [];
      await Promise.all(
        entries.map(async ([entryId, fields]) => {
          const at = performance.now();
          const run = fields[1];
          started.set(run, at);
          await worker.eval(lease, 1, `${prefix}leases`, Date.now() + 10_000, run);
          await worker.multi().xack(key, 'workers', entryId).xdel(key, entryId).exec();
          handled += 1;
          onHandled?.();
        }),
      );
    }
  })();
  const latenciesMs: number[] = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const run = `l${i}`;
    const done = new Promise<void>((resolve) => (onHandled = resolve));
    const at = performance.now();
    await producer.xadd(key, '*', 'r', run);
    await done;
    latenciesMs.push((started.get(run) as number) - at);
  }
  handled = 0;
  const all = new Promise<void>((resolve) => (onHandled = () => handled >= THROUGHPUT_RUNS && resolve()));
  const began = performance.now();
  const pipeline = producer.pipeline();
  for (let i = 0; i < THROUGHPUT_RUNS; i++) pipeline.xadd(key, '*', 'r', `t${i}`);
  await pipeline.exec();
  await all;
  const runsPerSec = THROUGHPUT_RUNS / ((performance.now() - began) / 1000);
  stop = true;
  await loop;
  await producer.del(key, `${prefix}leases`);
  for (const c of [producer, reader, worker]) c.disconnect();
  return { latenciesMs, runsPerSec };
}

async function bullmqRound(url: string): Promise<RoundResult> {
  const name = `bench-${randomUUID()}`;
  const connection = { url, maxRetriesPerRequest: null };
  const queue = new Queue(name, { connection });
  const started = new Map<string, number>();
  let handled = 0;
  let onHandled: (() => void) | undefined;
  const worker = new Worker(
    name,
    async (job) => {
      started.set(job.name, performance.now());
    },
    { connection, concurrency: CONCURRENCY, removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } },
  );
  worker.on('completed', () => {
    handled += 1;
    onHandled?.();
  });
  await worker.waitUntilReady();
  const latenciesMs: number[] = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const run = `l${i}`;
    const done = new Promise<void>((resolve) => (onHandled = resolve));
    const at = performance.now();
    await queue.add(run, {});
    await done;
    latenciesMs.push((started.get(run) as number) - at);
  }
  handled = 0;
  const all = new Promise<void>((resolve) => (onHandled = () => handled >= THROUGHPUT_RUNS && resolve()));
  const began = performance.now();
  await queue.addBulk(Array.from({ length: THROUGHPUT_RUNS }, (_, i) => ({ name: `t${i}`, data: {} })));
  await all;
  const runsPerSec = THROUGHPUT_RUNS / ((performance.now() - began) / 1000);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  return { latenciesMs, runsPerSec };
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const results: Record<'streams' | 'bullmq', RoundResult[]> = { streams: [], bullmq: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Turns, alternating who goes first: neither pays alone for warm-up or a burst of load.
      const order = round % 2 === 0 ? (['streams', 'bullmq'] as const) : (['bullmq', 'streams'] as const);
      for (const which of order) results[which].push(which === 'streams' ? await streamsRound(redis.url) : await bullmqRound(redis.url));
    }
  } finally {
    await redis.stop();
  }
  console.log(`queue choice: ${ROUNDS} rounds, ${LATENCY_RUNS} one-at-a-time runs and ${THROUGHPUT_RUNS} bulk runs (concurrency ${CONCURRENCY}) per round; min / median / max`);
  for (const which of ['streams', 'bullmq'] as const) {
    const latency = spread(results[which].flatMap((r) => r.latenciesMs));
    const medians = spread(results[which].map((r) => spread(r.latenciesMs).median));
    const rate = spread(results[which].map((r) => r.runsPerSec));
    console.log(
      `${which === 'streams' ? 'Redis Streams consumer group' : 'BullMQ ' + bullmqVersion()}: enqueue→start ${fmt(latency)} ms (round medians ${fmt(medians)} ms); runs/s ${fmt(rate, 0)}`,
    );
  }
  const ratio = spread(results.streams.map((r, i) => r.runsPerSec / results.bullmq[i].runsPerSec));
  console.log(`runs/s, Streams ÷ BullMQ per round: ${fmt(ratio)}`);
}

function bullmqVersion(): string {
  try {
    return (JSON.parse(readFileSync(require.resolve('bullmq/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '';
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

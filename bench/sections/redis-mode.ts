/**
 * Redis mode beside in-memory, in the same run (the two servers take turns each repetition):
 * - one stream at 1,000 tool calls per task, flat out: frames/s (and the ratio), server CPU per frame;
 * - 100 paced streams: p99 publish-to-client latency, server CPU per frame (each run right after
 *   the server's warm-up run again, as in the side section: lib/server-pool.ts `warmFirst`);
 * - Redis round trips per frame, in an untimed run of each scenario under MONITOR: the commands
 *   clients sent (those run inside the append script excluded; a pipeline of k counts k, so an
 *   upper bound), and, beside them, every command Redis ran.
 * Without redis-server, the section says so and measures nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { LatencySummary } from '../load/load-types';
import { describeRunGc } from '../lib/gc-pauses';
import type { Target } from '../lib/ipc';
import { RedisCommandCounter } from '../lib/redis-monitor';
import { FRAMES_PER_TOOL_CALL, type Scenario } from '../lib/scenario';
import type { BenchSection, SectionContext, SectionReport, SectionRow, SectionTarget } from '../lib/section';
import { runRecord, type RunRecord } from '../lib/server-pool';
import { ratio, spread, worst, type Spread } from '../lib/stats';

const MODES: readonly Target[] = ['toolstream', 'toolstream-redis'];
const ONE_STREAM_CALLS = 1_000;
const PACED_STREAMS = 100;

interface Case {
  label: string;
  streams: number;
  maxOpen?: number;
  scenario: Scenario;
  timeLimitMs: number;
}

function fmt(s: Spread, digits: number): string {
  return s.reps.map((v) => v.toFixed(digits)).join(', ');
}

function check(label: string, s: Spread, higherIsBetter: boolean, limit: number, digits: number, unit = ''): SectionTarget {
  const w = worst(s, higherIsBetter);
  return { target: label, worst: `${w.toFixed(digits)}${unit}`, reps: fmt(s, digits), met: Number.isFinite(w) && (higherIsBetter ? w >= limit : w < limit) };
}

export const redisModeSection: BenchSection = {
  name: 'redis',
  async run({ config, pool, log }: SectionContext): Promise<SectionReport> {
    const columns = ['frames/s', 'server CPU per frame (µs)', 'p99 publish→client (ms)', 'Redis/in-memory frames/s', 'client commands per frame', 'all Redis commands per frame'];
    const title = 'Redis mode beside in-memory';
    if (!pool.redis) {
      log('redis: no redis-server, nothing measured');
      return { title, description: 'redis-server is not installed: nothing measured.', columns, rows: [] };
    }
    const redisUrl = pool.redis.url;
    const oneStreamTasks = Math.max(1, Math.round(config.curveFrameBudget / (ONE_STREAM_CALLS * FRAMES_PER_TOOL_CALL)));
    const cases: Case[] = [
      { label: `1 stream, ${ONE_STREAM_CALLS} calls/task`, streams: oneStreamTasks, maxOpen: 1, scenario: { toolCalls: ONE_STREAM_CALLS, intervalMs: 0, idle: false }, timeLimitMs: config.curveTimeLimitMs },
      {
        label: `${PACED_STREAMS} paced streams (${config.pacedIntervalMs} ms between calls)`,
        streams: PACED_STREAMS,
        scenario: { toolCalls: config.pacedToolCalls, intervalMs: config.pacedIntervalMs, idle: false },
        timeLimitMs: config.pacedTimeLimitMs,
      },
    ];
    const rows: SectionRow[] = [];
    const targets: SectionTarget[] = [];
    const data: Record<string, unknown> = {};
    for (const c of cases) {
      const runs: Partial<Record<Target, RunRecord[]>> = {};
      const phases: Partial<Record<Target, NonNullable<LatencySummary['byPhase']>[]>> = {};
      const ratios: number[] = [];
      for (let rep = 0; rep < config.reps; rep++) {
        const same: Partial<Record<Target, RunRecord>> = {};
        for (const target of MODES) {
          const paced = c.streams === PACED_STREAMS;
          const measured = await pool.run(target, c.streams, c.scenario, c.timeLimitMs, c.maxOpen, { watchGc: paced, warmFirst: paced });
          const record = runRecord(measured, rep, c.scenario);
          const byPhase = measured.result.latency.byPhase;
          if (byPhase) (phases[target] ??= []).push(byPhase);
          if (record.completed < c.streams) throw new Error(`redis section, ${c.label}, ${target}: ${c.streams - record.completed} of ${c.streams} streams did not complete`);
          same[target] = record;
          (runs[target] ??= []).push(record);
        }
        ratios.push(ratio(same['toolstream-redis']?.framesPerSec ?? NaN, same.toolstream?.framesPerSec ?? NaN));
      }
      // Round trips: one more run of Redis mode, untimed, under MONITOR.
      const counter = await RedisCommandCounter.start(redisUrl);
      const counted = runRecord(await pool.run('toolstream-redis', c.streams, c.scenario, c.timeLimitMs * 3, c.maxOpen), 0, c.scenario);
      await sleep(500);
      const commands = counter.take();
      counter.stop();
      const perFrame = { client: commands.client / counted.frames, all: (commands.client + commands.script) / counted.frames };
      const ratioSpread = spread(ratios);
      for (const target of MODES) {
        const mine = runs[target] ?? [];
        const redis = target === 'toolstream-redis';
        const fps = spread(mine.map((r) => r.framesPerSec));
        const cpu = spread(mine.map((r) => r.serverCpuPerFrameUs));
        const p99 = spread(mine.map((r) => r.latencyP99Ms));
        rows.push({
          label: `${c.label}: ${redis ? 'Redis' : 'in-memory'}`,
          cells: [fps, cpu, p99, redis ? ratioSpread : '—', redis ? perFrame.client.toFixed(2) : '—', redis ? perFrame.all.toFixed(2) : '—'],
        });
        if (redis && c.streams === PACED_STREAMS) targets.push(check(`Redis mode: p99 publish-to-client latency < 10 ms at ${PACED_STREAMS} streams`, p99, false, 10, 2, ' ms'));
      }
      if (c.maxOpen === 1) targets.push(check(`Redis mode, one stream at ${ONE_STREAM_CALLS} calls/task: ≥ 0.5× in-memory frames/s`, ratioSpread, true, 0.5, 2, '×'));
      targets.push({ target: `Redis mode, ${c.label}: ≤ 1 Redis round trip per frame (client commands, an upper bound)`, worst: perFrame.client.toFixed(2), reps: perFrame.client.toFixed(2), met: perFrame.client <= 1 });
      data[c.label] = { runs, ratios, commands, countedFrames: counted.frames, latencyByPhase: phases };
      if (c.streams === PACED_STREAMS) {
        // Where the slow frames are: a task's first tenth of frames (while the other tasks are still being set up), its last tenth (while they end), or between.
        const byPhase = (target: Target): string =>
          (phases[target] ?? []).map((p) => `${p.first.p99Ms.toFixed(2)} / ${p.middle.p99Ms.toFixed(2)} / ${p.last.p99Ms.toFixed(2)}`).join(', ');
        log(`redis ${c.label}: p99 (ms) by where a frame falls in its task, first tenth / middle / last tenth of its frames, per repetition: Redis ${byPhase('toolstream-redis')}; in-memory ${byPhase('toolstream')}`);
        const gcOf = (target: Target): string => (runs[target] ?? []).map(({ gc }) => describeRunGc(gc)).join('; ');
        log(`redis ${c.label}: GC per repetition (scavenges × median/max pause, old space free at the start): Redis ${gcOf('toolstream-redis')}; in-memory ${gcOf('toolstream')}`);
        // On two shared cores a repetition's p99 follows how long the server and Redis waited for a CPU.
        const waitOf = (target: Target): string =>
          (runs[target] ?? []).map(({ runQueueWaitMs: w }) => (w ? `${Math.round(w.server)}${w.redis !== undefined ? ` + Redis ${Math.round(w.redis)}` : ''}` : '—')).join(', ');
        log(`redis ${c.label}: waited for a CPU per repetition, ms (server + its Redis): Redis mode ${waitOf('toolstream-redis')}; in-memory ${waitOf('toolstream')}`);
      }
      log(
        `redis ${c.label}: in-memory ${Math.round(spread((runs.toolstream ?? []).map((r) => r.framesPerSec)).median)} f/s, Redis ${Math.round(spread((runs['toolstream-redis'] ?? []).map((r) => r.framesPerSec)).median)} f/s, ratio ${fmt(ratioSpread, 2)}; ` +
          `p99 Redis ${fmt(spread((runs['toolstream-redis'] ?? []).map((r) => r.latencyP99Ms)), 2)} ms; ${perFrame.client.toFixed(2)} client commands per frame (${perFrame.all.toFixed(2)} with the script's); ` +
          `per frame by command: ${Object.entries(commands.byName)
            .slice(0, 8)
            .map(([name, n]) => `${name} ${(n / counted.frames).toFixed(3)}`)
            .join(', ')} (${counted.frames} frames)`,
      );
    }
    return {
      title,
      description:
        'The same server with its task store in memory and in Redis (a redis-server of the bench\'s own on loopback), taking turns each repetition; each paced run comes right after the server\'s warm-up run again (untimed). ' +
        'Commands per frame come from one more, untimed, run under MONITOR: "client commands" are those the instance sent (an upper bound on round trips: a pipeline of k counts k), "all" adds those the append script ran inside Redis.',
      columns,
      digits: [0, 1, 2, 2, 2, 2],
      rows,
      targets,
      data,
    };
  },
};

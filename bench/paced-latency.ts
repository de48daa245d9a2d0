/**
 * `node -r ts-node/register/transpile-only bench/paced-latency.ts [toolCalls=100] [reps=3] [targets=toolstream-redis] [prefill=0x0] [--server-flags=<flag,flag>] [--alloc-profile=<dir> [--alloc-profile-survivors]] [--idle-before=<s>] [--warm-before]`
 *
 * The redis section's latency row alone, for A/B runs of the Redis path: 100 paced streams
 * (a tool call every 50 ms each) of `toolCalls` calls, `reps` times per target (comma-separated
 * targets take turns), on a redis-server of its own. Prints each repetition's p50 / p99
 * publish-to-client latency, the p99 of the first, middle and last tenth of each task's frames,
 * server CPU per frame, Redis's own CPU per frame (INFO cpu, user + system), Redis socket reads per frame (INFO total_reads_processed: fewer when
 * commands share writes) and the time Redis spent per frame in the commands that took most
 * (INFO commandstats; a script's time includes the commands it ran, which are listed too), and the commands Redis ran per frame, in all and by command (INFO commandstats' calls: a script's call and each command it ran count one; the probe's own INFO reads are a few per run). `prefill` = `<tasks>x<calls>` first runs that many tasks
 * flat out (10 at a time, untimed) on each target, as the servers and the Redis of a full bench
 * have served other rows before its paced ones (finished tasks retained in Redis up to
 * maxRetainedBytes, the oldest evicted as each new one ends). Run it from `git archive` copies of
 * the two commits, alternately.
 *
 * Each repetition also prints the server's GC pauses during it (young-generation scavenges: count,
 * median, max, how many over 5 ms, total; other GCs: count, total): in Redis mode a frame is
 * written only once Redis acknowledged it, so a pause that falls within its round trip is part of
 * its latency. Without `--warm-before` it also prints how much the old generation grew per frame
 * during the run (old space and large objects, read right before and after it): with only scavenges
 * in the run, what they promoted and what V8 allocated there directly, counted with no profiler or
 * flag in the server (Redis mode, 2026-12-06: 319-323 B/frame against 292-299 by the sum of
 * --trace-gc-nvp's `promoted` in the same runs); old space is freed only by sweeping after a
 * mark-compact, so a low or negative figure in a run with none says one before it was still being
 * swept. `--server-flags` gives every server more node flags (comma-separated), e.g.
 * `--server-flags=--max-semi-space-size=4` to see how the young generation's size moves the pauses
 * and the p99. `--alloc-profile=<dir>` writes each repetition's allocation profile
 * there (`<target>-<rep>.heapprofile`, V8's sampling heap profiler counting also what was
 * collected since: what fills the young generation) and prints the bytes allocated per frame,
 * in all and by the functions that allocated most; with `--alloc-profile-survivors` only what no
 * scavenge collected (what the young generation copied and promoted, or is still alive after two
 * scavenges forced at the end): what makes the scavenges' pauses and the old generation's growth. Only a repetition with no other GC counts that alone: a mark-compact collects the young generation too, and what it finds dead there counts as if promoted (2026-12-06, Redis mode: 376-432 B/frame in repetitions without one, 882-1,592 with 4-6). `--idle-before=<s>` leaves the servers idle
 * that long before each repetition, as the side section's Redis server idles through the other
 * targets' runs (its throughput rows, then three paced runs per repetition): V8 shrinks an idle
 * server's young generation, and each repetition prints its capacity at the start and the end.
 * `--warm-before` runs the pool's warm-up again right before each repetition (untimed), as the
 * side and redis sections do before each paced run.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type Redis from 'ioredis';
import type { Target } from './lib/ipc';
import { allocationSites, type AllocationNode } from './lib/allocation-sites';
import { gcSummary, type GcDuringRun } from './lib/gc-pauses';
import { commandTimes, redisCpuUs } from './lib/redis-command-times';
import { runRecord } from './lib/server-pool';
import { withRedisServerPool } from './lib/with-redis-server-pool';

/** Commands Redis ran since the last CONFIG RESETSTAT (INFO commandstats: a script's call and the commands it ran each count), in all and by command, most first. */
async function commandCalls(client: Redis): Promise<{ total: number; byCommand: [string, number][] }> {
  const byCommand: [string, number][] = [];
  for (const [, name, calls] of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) byCommand.push([name, Number(calls)]);
  return { total: byCommand.reduce((sum, [, calls]) => sum + calls, 0), byCommand: byCommand.sort((a, b) => b[1] - a[1]) };
}

async function readsProcessed(client: Redis): Promise<number> {
  return Number(/total_reads_processed:(\d+)/.exec(await client.info('stats'))?.[1] ?? NaN);
}

/** Bytes allocated per frame in all, and by the functions that allocated most (their own allocations). */
function allocationSummary(file: string, frames: number, what = 'allocated'): string {
  const { total, top } = allocationSites((JSON.parse(readFileSync(file, 'utf8')) as { head: AllocationNode }).head);
  return `${what} ${Math.round(total / frames)} B/frame (${top.map(([site, bytes]) => `${site} ${Math.round(bytes / frames)}`).join(', ')})`;
}

/** The old generation's used bytes (old space and large objects): between two reads with only scavenges between, what they promoted. */
function oldGenerationBytes(heap: { oldSpaceUsedBytes: number; largeObjectSpaceUsedBytes: number }): number {
  return heap.oldSpaceUsedBytes + heap.largeObjectSpaceUsedBytes;
}

/** A tenth's p99, or 'absent' when it holds no frame (fewer than 10 calls per task: NaN, null once sent between processes). */
function phaseP99(phase: { p99Ms: number | null }): string {
  return typeof phase.p99Ms === 'number' && Number.isFinite(phase.p99Ms) ? phase.p99Ms.toFixed(2) : 'absent';
}

function option(name: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

async function main(): Promise<void> {
  const serverFlags = (option('server-flags') ?? '').split(',').filter(Boolean);
  const allocationDir = option('alloc-profile');
  // The server writes its profiles there: a directory that does not exist yet is made, not a run lost to ENOENT.
  if (allocationDir) mkdirSync(allocationDir, { recursive: true });
  const idleBeforeS = Number(option('idle-before') ?? 0);
  const warmBefore = process.argv.includes('--warm-before');
  const survivorsOnly = process.argv.includes('--alloc-profile-survivors');
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const toolCalls = Number(args[0] ?? 100);
  const reps = Number(args[1] ?? 3);
  const targets = (args[2] ?? 'toolstream-redis').split(',') as Target[];
  const [prefillTasks, prefillCalls] = (args[3] ?? '0x0').split('x').map(Number);
  // The servers and the load run as compiled JavaScript, as in `npm run bench`.
  await withRedisServerPool(targets, serverFlags, async ({ pool, client }) => {
    if (prefillTasks > 0) {
      for (const target of targets) await pool.run(target, prefillTasks, { toolCalls: prefillCalls, intervalMs: 0, idle: false }, 600_000, 10);
      console.log(`prefilled: ${prefillTasks} tasks of ${prefillCalls} calls on each target; Redis used_memory ${/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]} bytes`);
    }
    for (let rep = 0; rep < reps; rep++) {
      for (const target of targets) {
        const scenario = { toolCalls, intervalMs: 50, idle: false };
        if (idleBeforeS > 0) await sleep(idleBeforeS * 1000);
        await client.config('RESETSTAT');
        const server = await pool.server(target);
        if (allocationDir) await server.startAllocationProfile(survivorsOnly);
        const redisCpuAtStart = await redisCpuUs(client);
        // Without --warm-before the read is right before the run (the warm-up runs inside pool.run, and would count).
        const oldAtStart = warmBefore ? undefined : oldGenerationBytes(await server.gcPauses());
        const measured = await pool.run(target, 100, scenario, 60_000, undefined, { watchGc: true, warmFirst: warmBefore });
        const pauses = measured.gc as GcDuringRun;
        const allocationFile = allocationDir && join(allocationDir, `${target}-${rep}.heapprofile`);
        if (allocationFile) await server.stopAllocationProfile(allocationFile);
        const r = runRecord(measured, rep, scenario);
        const oldGrowth = oldAtStart === undefined ? '' : `, old generation grew ${Math.round((oldGenerationBytes(await server.gcPauses()) - oldAtStart) / r.frames)} B/frame${pauses.others.length > 0 ? ' (a GC other than a scavenge fell in: not what was promoted)' : ''}`;
        const redisCpuPerFrame = ((await redisCpuUs(client)) - redisCpuAtStart) / r.frames;
        const times = await commandTimes(client);
        const calls = await commandCalls(client);
        const phases = measured.result.latency.byPhase;
        const phase = phases ? `${phaseP99(phases.first)} / ${phaseP99(phases.middle)} / ${phaseP99(phases.last)}` : '-';
        console.log(
          `${target} rep ${rep}: p50 ${r.latencyP50Ms.toFixed(2)} ms, p99 ${r.latencyP99Ms.toFixed(2)} ms (first / middle / last tenth: ${phase}), ` +
            `server CPU ${r.serverCpuPerFrameUs.toFixed(1)} µs/frame, Redis CPU ${redisCpuPerFrame.toFixed(1)} µs/frame, Redis reads ${((await readsProcessed(client)) / r.frames).toFixed(3)}/frame, ` +
            `Redis µs/frame by command ${times
              .slice(0, 4)
              .map(([name, us]) => `${name} ${(us / r.frames).toFixed(1)}`)
              .join(', ')}, Redis commands ${(calls.total / r.frames).toFixed(3)}/frame (${calls.byCommand
              .slice(0, 6)
              .map(([name, count]) => `${name} ${(count / r.frames).toFixed(3)}`)
              .join(', ')}), GC: ${gcSummary(pauses)}, old space free at the start ${(pauses.oldSpaceFreeBytesAtStart / 2 ** 20).toFixed(1)} MiB, young generation ${(pauses.newSpaceBytesAtStart / 2 ** 20).toFixed(1)} → ${(pauses.newSpaceBytesAtEnd / 2 ** 20).toFixed(1)} MiB${oldGrowth}, load ${r.loadAverage.toFixed(1)}` + (allocationFile ? `; ${allocationSummary(allocationFile, r.frames, survivorsOnly ? 'outlived a scavenge' : 'allocated')}${survivorsOnly && pauses.others.length > 0 ? ' (a GC other than a scavenge fell in: it counts what it found dead in the young generation too)' : ''}` : ''),
        );
      }
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

/**
 * `node -r ts-node/register/transpile-only bench/redis-one-stream.ts [reps=5] [toolCalls=1000] [tasks=5] [targets=toolstream,toolstream-redis]`
 *
 * The redis section's one-stream row alone, for A/B runs of Redis mode's per-frame path: `tasks`
 * tasks of `toolCalls` calls, one stream at a time, flat out, on each target in turn, `reps`
 * times (as the redis section and the curves' Redis point run it). Prints each repetition's
 * frames/s, server CPU per frame, Redis's own CPU per frame (INFO cpu) and the Redis/in-memory
 * ratio, then min / median / max of each. Run it from `git archive` copies of two commits,
 * alternately.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type Redis from 'ioredis';
import type { Target } from './lib/ipc';
import { redisCpuUs } from './lib/redis-command-times';
import { runRecord } from './lib/server-pool';
import { withRedisServerPool } from './lib/with-redis-server-pool';

/** Calls per command since the last CONFIG RESETSTAT, and the socket reads Redis processed ('reads'). */
async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const [, name, n] of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(name, Number(n));
  for (const [, name, usec] of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=\d+,usec=(\d+)/gm)) calls.set(`usec:${name}`, Number(usec));
  calls.set('reads', Number(/total_reads_processed:(\d+)/.exec(await client.info('stats'))?.[1] ?? NaN));
  return calls;
}

/** A process's user and system CPU so far, in µs (/proc/<pid>/stat, clock ticks of 10 ms). */
function cpuSplitUs(pid: number): { user: number; sys: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) * 10_000, sys: Number(fields[12]) * 10_000 };
}

function mmm(values: number[], digits: number): string {
  const s = [...values].sort((a, b) => a - b);
  return `${s[0].toFixed(digits)} / ${s[Math.floor(s.length / 2)].toFixed(digits)} / ${s[s.length - 1].toFixed(digits)}`;
}

async function main(): Promise<void> {
  const reps = Number(process.argv[2] ?? 5);
  const toolCalls = Number(process.argv[3] ?? 1_000);
  const tasks = Number(process.argv[4] ?? 5);
  const targets = (process.argv[5] ?? 'toolstream,toolstream-redis').split(',') as Target[];
  const fps: Record<string, number[]> = {};
  const cpu: Record<string, number[]> = {};
  const redisCpu: number[] = [];
  const ratios: number[] = [];
  await withRedisServerPool(targets, [], async ({ pool, client }) => {
    for (let rep = 0; rep < reps; rep++) {
      const row: Partial<Record<Target, number>> = {};
      for (const target of targets) {
        const scenario = { toolCalls, intervalMs: 0, idle: false };
        if (target === 'toolstream-redis') await client.config('RESETSTAT');
        const r0 = await redisCpuUs(client);
        const pid = (((await pool.server(target)) as unknown as { child: { pid: number } }).child).pid;
        const s0 = cpuSplitUs(pid);
        const r = runRecord(await pool.run(target, tasks, scenario, 120_000, 1), rep, scenario);
        const redisUs = ((await redisCpuUs(client)) - r0) / r.frames;
        const s1 = cpuSplitUs(pid);
        const stats = target === 'toolstream-redis' ? await commandCalls(client) : undefined;
        if (r.completed !== tasks) throw new Error(`${target}: ${tasks - r.completed} of ${tasks} streams did not complete`);
        (fps[target] ??= []).push(r.framesPerSec);
        (cpu[target] ??= []).push(r.serverCpuPerFrameUs);
        if (target === 'toolstream-redis') redisCpu.push(redisUs);
        row[target] = r.framesPerSec;
        console.log(
          `${target} rep ${rep}: ${r.framesPerSec.toFixed(0)} f/s, server ${r.serverCpuPerFrameUs.toFixed(1)} µs/frame (user ${((s1.user - s0.user) / r.frames).toFixed(1)}, system ${((s1.sys - s0.sys) / r.frames).toFixed(1)}), client ${r.clientCpuPerFrameUs.toFixed(1)}` +
            (stats ? `, Redis ${redisUs.toFixed(1)} µs/frame, events per append call ${((stats.get('xadd') ?? NaN) / (stats.get('evalsha') ?? NaN)).toFixed(2)}, reads ${((stats.get('reads') ?? NaN) / r.frames).toFixed(3)}/frame, Redis µs/frame by command ${[...stats].filter(([k]) => k.startsWith('usec:')).sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, us]) => `${k.slice(5)} ${(us / r.frames).toFixed(2)}`).join(', ')}` : '') +
            `, load ${r.loadAverage.toFixed(1)}`,
        );
      }
      if (row.toolstream && row['toolstream-redis']) ratios.push(row['toolstream-redis'] / row.toolstream);
    }
    for (const target of targets) console.log(`${target}: frames/s ${mmm(fps[target], 0)}; server µs/frame ${mmm(cpu[target], 1)} (min / median / max)`);
    if (redisCpu.length) console.log(`Redis's own µs/frame ${mmm(redisCpu, 1)}`);
    if (ratios.length) console.log(`Redis/in-memory frames/s ${mmm(ratios, 2)}; per rep ${ratios.map((x) => x.toFixed(2)).join(', ')}; load now ${loadavg()[0].toFixed(1)}`);
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

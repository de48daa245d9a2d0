/**
 * `node -r ts-node/register/transpile-only bench/task-commands.ts [calls=2,12] [tasks=100] [reps=2]`
 *
 * What a task's start and end cost Redis mode in commands, apart from its frames: `tasks` paced
 * streams (a call every 50 ms, as the redis section's latency row) of each number of calls,
 * `reps` times, each counted with MONITOR (lib/redis-monitor.ts: commands clients sent, by name,
 * and commands scripts ran). Per task = the count at the fewer calls less what the extra calls
 * add (fitted per call from the two counts). MONITOR slows Redis: counts only, no times.
 */
import type { Target } from './lib/ipc';
import { commandTimes, redisCpuUs } from './lib/redis-command-times';
import { RedisCommandCounter } from './lib/redis-monitor';
import { runRecord } from './lib/server-pool';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { ADMIT_LIVE_SCRIPT, RENEW_LIVE_SCRIPT } from '../src/a2a/store/redis-live-limits';
import { RETAIN_SCRIPT } from '../src/a2a/store/redis-retention';
import { APPEND_SCRIPT } from '../src/a2a/store/redis-task-appender';
import * as queue from '../src/a2a/store/run-queue-scripts';
import { withRedisServerPool } from './lib/with-redis-server-pool';

/** The store's scripts by SHA1 (SCRIPT LOAD's), named from the texts it loads: EVALSHA counted by script. */
const SCRIPT_NAMES: ReadonlyMap<string, string> = new Map(
  Object.entries({ APPEND_SCRIPT, RETAIN_SCRIPT, ADMIT_LIVE_SCRIPT, RENEW_LIVE_SCRIPT, ...queue } as Record<string, string>).map(([name, lua]) => [
    createHash('sha1').update(lua).digest('hex'),
    name.replace(/_SCRIPT$/, '').toLowerCase(),
  ]),
);

type Counts = ReturnType<RedisCommandCounter['take']>;

function r0load(): string {
  return loadavg()[0].toFixed(1);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [fewer, more] = (args[0] ?? '2,12').split(',').map(Number);
  const tasks = Number(args[1] ?? 100);
  const reps = Number(args[2] ?? 2);
  const target: Target = 'toolstream-redis';
  await withRedisServerPool([target], [], async ({ pool, redis, client }) => {
    await pool.server(target);
    for (let rep = 0; rep < reps; rep++) {
      const counts: Record<number, Counts> = {};
      for (const calls of [fewer, more]) {
        const counter = await RedisCommandCounter.start(redis.url, { scripts: SCRIPT_NAMES, scriptCommandsByName: true });
        const measured = await pool.run(target, tasks, { toolCalls: calls, intervalMs: 0 === calls ? 0 : 50, idle: false }, 120_000);
        // The expiries and releases after the streams end.
        await new Promise((resolve) => setTimeout(resolve, 500));
        counts[calls] = counter.take();
        counter.stop();
        if (measured.result.completed !== tasks) console.log(`rep ${rep}: ${calls} calls: ${measured.result.completed} of ${tasks} streams completed`);
      }
      const a = counts[fewer];
      const b = counts[more];
      const perCall = (x: number, y: number): number => (y - x) / (more - fewer) / tasks;
      const perTask = (x: number, y: number): number => x / tasks - fewer * perCall(x, y);
      const names = new Set([...Object.keys(a.byName), ...Object.keys(b.byName)]);
      const rows = [...names]
        .map((name) => [name, perTask(a.byName[name] ?? 0, b.byName[name] ?? 0), perCall(a.byName[name] ?? 0, b.byName[name] ?? 0)] as const)
        .sort((x, y) => y[1] - x[1]);
      // Times apart, without MONITOR (which slows every command down): Redis's µs by command
      // (INFO commandstats), Redis's CPU and the server's CPU, per task and per call the same way.
      const writes: Record<number, number> = {};
      const timed: Record<number, { byName: Record<string, number>; redisCpu: number; serverCpu: number }> = {};
      for (const calls of [fewer, more]) {
        await client.config('RESETSTAT');
        const cpu0 = await redisCpuUs(client);
        const scenario = { toolCalls: calls, intervalMs: 50, idle: false };
        // The server's write system calls (its socket writes: to Redis and to the clients), with perf's tracepoints.
        const pid = (await pool.server(target)).pid;
        const perf = spawn('perf', ['stat', '-x,', '-e', 'syscalls:sys_enter_write,syscalls:sys_enter_writev', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
        let perfText = '';
        perf.stderr.on('data', (chunk: Buffer) => (perfText += chunk.toString()));
        await new Promise((resolve) => setTimeout(resolve, 300));
        const measured = await pool.run(target, tasks, scenario, 120_000);
        await new Promise((resolve) => setTimeout(resolve, 500));
        perf.kill('SIGINT');
        await once(perf, 'exit');
        writes[calls] = perfText.split('\n').reduce((sum, line) => sum + (Number(line.split(',')[0]) || 0), 0);
        const r = runRecord(measured, rep, scenario);
        timed[calls] = { byName: Object.fromEntries(await commandTimes(client)), redisCpu: (await redisCpuUs(client)) - cpu0, serverCpu: r.serverCpuPerFrameUs * r.frames };
      }
      const ta = timed[fewer];
      const tb = timed[more];
      const timedNames = new Set([...Object.keys(ta.byName), ...Object.keys(tb.byName)]);
      const timedRows = [...timedNames]
        .map((name) => [name, perTask(ta.byName[name] ?? 0, tb.byName[name] ?? 0), perCall(ta.byName[name] ?? 0, tb.byName[name] ?? 0)] as const)
        .filter(([, t]) => Math.abs(t) >= 0.5)
        .sort((x, y) => y[1] - x[1]);
      console.log(
        `rep ${rep}: per task / per call, µs: server CPU ${perTask(ta.serverCpu, tb.serverCpu).toFixed(0)} / ${perCall(ta.serverCpu, tb.serverCpu).toFixed(0)}, ` +
          `Redis CPU ${perTask(ta.redisCpu, tb.redisCpu).toFixed(0)} / ${perCall(ta.redisCpu, tb.redisCpu).toFixed(0)}, the server's write system calls ${perTask(writes[fewer], writes[more]).toFixed(2)} / ${perCall(writes[fewer], writes[more]).toFixed(3)}; in Redis by command (commandstats): ` +
          timedRows.map(([n, t, c]) => `${n} ${t.toFixed(1)} / ${c.toFixed(1)}`).join(', ') +
          `; load ${r0load()}`,
      );
      console.log(
        `rep ${rep}: per task ${perTask(a.client, b.client).toFixed(2)} client commands (${perTask(a.script, b.script).toFixed(2)} in scripts), per call ${perCall(a.client, b.client).toFixed(3)} (${perCall(a.script, b.script).toFixed(3)} in scripts); ` +
          `by name, per task / per call: ${rows.map(([n, t, c]) => `${n} ${t.toFixed(2)} / ${c.toFixed(3)}`).join(', ')}`,
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

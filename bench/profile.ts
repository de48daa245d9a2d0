/**
 * `npm run bench:profile [-- empty|stream|streams|tasks1k|paced|executor] [--target=limit|floor|reference|toolstream-redis]`
 *
 * CPU profiles of toolstream's server for the two per-request cases the benchmark targets:
 * `empty`, empty tasks one after another, `stream`, one stream of 30,000 tool calls, and
 * `streams`, 1,000 concurrent streams of 100 tool calls. Each starts a fresh server, warms it
 * up, profiles only the load, and writes the raw
 * profile to bench/.work/profiles and its summary to bench/profiles/<case>.md (committed, so a
 * change to the hot path can be compared with the last summary). With --target, another
 * server is profiled instead (summaries named <case>-<target>.md), to compare where each spends
 * (`empty --target=floor`: the framework floor, Nest and Express around the limit's handler).
 * `executor` profiles the executor overhead section's agent, bare and through the executor.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { LoadJob } from './load/load-types';
import { EMPTY_TASK_TARGETS, type Target } from './lib/ipc';
import { LoadProcess } from './lib/processes';
import { BenchRedis } from './lib/redis';
import { ServerPool } from './lib/server-pool';
import { summariseProfile, type CpuProfile } from './profile-summary';
import { agentOf, bareRun, executorRun } from './sections/executor-overhead';
import { inspectorPost } from './lib/inspector-post';

const CASES: Record<string, { what: string; job: Omit<LoadJob, 'url'> }> = {
  empty: {
    what: '2,000 empty tasks (no tool call), one after another on one stream at a time',
    job: { streams: 2_000, maxOpen: 1, scenario: { toolCalls: 0, intervalMs: 0, idle: false }, timeLimitMs: 120_000 },
  },
  stream: {
    what: 'one stream of 30,000 tool calls, flat out',
    job: { streams: 1, scenario: { toolCalls: 30_000, intervalMs: 0, idle: false }, timeLimitMs: 120_000 },
  },
  streams: {
    what: '1,000 concurrent streams of 100 tool calls each, flat out',
    job: { streams: 1_000, scenario: { toolCalls: 100, intervalMs: 0, idle: false }, timeLimitMs: 120_000 },
  },
  tasks1k: {
    what: '20 tasks of 1,000 tool calls, one stream at a time, flat out (the one-stream case of the redis section)',
    job: { streams: 20, maxOpen: 1, scenario: { toolCalls: 1_000, intervalMs: 0, idle: false }, timeLimitMs: 120_000 },
  },
  paced: {
    what: '100 paced streams of 100 tool calls each, 50 ms between calls (the latency case of the redis section)',
    job: { streams: 100, scenario: { toolCalls: 100, intervalMs: 50, idle: false }, timeLimitMs: 120_000 },
  },
};

/**
 * The executor overhead, profiled in this process: the same agent streamed bare, then through
 * DeepAgentExecutor, each profiled alone; the difference between the two summaries is what the
 * executor adds per run.
 */
async function profileExecutor(summaryDir: string, rawDir: string): Promise<void> {
  const runs = 200;
  const { agent, executor } = agentOf('1 turn', 100);
  for (let i = 0; i < 40; i++) {
    await bareRun(agent, `warm-bare-${i}`);
    await executorRun(executor, `warm-exec-${i}`, 100);
  }
  const session = new Session();
  session.connect();
  const post = <T = unknown>(method: string, params?: object): Promise<T> => inspectorPost<T>(session, method, params);
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  const sections: string[] = [];
  for (const side of ['bare', 'executor'] as const) {
    let cpuMs = 0;
    await post('Profiler.start');
    for (let i = 0; i < runs; i++) cpuMs += side === 'bare' ? await bareRun(agent, `bare-${i}`) : await executorRun(executor, `exec-${i}`, 100);
    const { profile } = await post<{ profile: CpuProfile }>('Profiler.stop');
    writeFileSync(join(rawDir, `executor-${side}.cpuprofile`), JSON.stringify(profile));
    sections.push(`## ${side === 'bare' ? 'Bare LangGraph stream' : 'Through DeepAgentExecutor'}: ${(cpuMs / runs).toFixed(2)} ms of CPU per run`, '', summariseProfile(profile, 25));
  }
  session.disconnect();
  writeFileSync(
    join(summaryDir, 'executor.md'),
    [
      `# CPU profile: the executor overhead (one model turn of 100 tool calls, ${runs} runs per side)`,
      '',
      `Profiled in one process after a warm-up, ${new Date().toISOString()}, load average ${loadavg()[0].toFixed(1)}. ` +
        'Regenerate with `npm run bench:profile -- executor`.',
      '',
      ...sections,
    ].join('\n'),
  );
  console.log('executor: summary in bench/profiles/executor.md');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rawDir = join(__dirname, '.work', 'profiles');
  const summaryDir = join(__dirname, 'profiles');
  mkdirSync(rawDir, { recursive: true });
  mkdirSync(summaryDir, { recursive: true });
  if (args.includes('executor')) {
    await profileExecutor(summaryDir, rawDir);
    return;
  }
  const target = (args.find((a) => a.startsWith('--target='))?.slice('--target='.length) ?? 'toolstream') as Target;
  const targets: Target[] = [...EMPTY_TASK_TARGETS, 'toolstream-redis'];
  if (!targets.includes(target)) throw new Error(`unknown target ${target}; targets: ${targets.join(', ')}`);
  const wanted = args.filter((a) => !a.startsWith('--'));
  const suffix = target === 'toolstream' ? '' : `-${target}`;
  const names = wanted.length ? wanted : ['empty', 'stream', 'streams'];
  const unknown = names.filter((n) => !(n in CASES));
  if (unknown.length) throw new Error(`unknown case ${unknown.join(', ')}; cases: ${Object.keys(CASES).join(', ')}, executor`);
  // Redis mode: a redis-server of the profile's own (see BenchRedis).
  const redis = target === 'toolstream-redis' ? await BenchRedis.start() : undefined;
  if (target === 'toolstream-redis' && !redis) throw new Error('toolstream-redis needs redis-server');
  if (redis) process.env.BENCH_REDIS_URL = redis.url;
  const load = await LoadProcess.start();
  const pool = new ServerPool(load, redis);
  try {
    for (const name of names) {
      const { what, job } = CASES[name];
      await pool.retire(target);
      const server = await pool.server(target);
      const loadAverage = loadavg()[0];
      const cpu0 = await server.cpuUs();
      await server.startProfile();
      const result = await load.run({ url: server.url, ...job });
      // Before the profile is stopped: serialising it costs the server about as much CPU again.
      const cpuUs = (await server.cpuUs()) - cpu0;
      const raw = join(rawDir, `${name}${suffix}.cpuprofile`);
      await server.stopProfile(raw);
      if (result.completed !== job.streams) throw new Error(`${name}: ${job.streams - result.completed} streams did not complete: ${result.errors.join('; ')}`);
      const profile = JSON.parse(readFileSync(raw, 'utf8')) as CpuProfile;
      const perTask = `${(cpuUs / job.streams).toFixed(0)} µs of server CPU per task${result.frames ? `, ${(cpuUs / result.frames).toFixed(1)} µs per frame` : ''}`;
      writeFileSync(
        join(summaryDir, `${name}${suffix}.md`),
        [
          `# CPU profile: ${what}`,
          '',
          `${target}'s server, profiled (sampling every 200 µs) after its warm-up, ${new Date().toISOString()}, load average ${loadAverage.toFixed(1)}: ` +
            `${perTask}, ${Math.round(result.framesPerSec)} frames/s. Regenerate with \`npm run bench:profile -- ${name}${target === 'toolstream' ? '' : ` --target=${target}`}\`.`,
          '',
          summariseProfile(profile),
        ].join('\n'),
      );
      console.log(`${name}: ${perTask}; summary in bench/profiles/${name}${suffix}.md, profile in ${raw}`);
    }
  } finally {
    await pool.stopAll();
    await load.stop();
    await redis?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});

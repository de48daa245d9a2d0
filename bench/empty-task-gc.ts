/**
 * `node -r ts-node/register/transpile-only bench/empty-task-gc.ts [tasks] [--target=limit]`
 *
 * Where an empty task's garbage goes: toolstream's server (the benchmark's, as
 * bench/servers/toolstream-server.ts builds it) or the limit runs in this process, the load
 * generator in its own, and empty tasks go one after another (as in the empty-task section).
 * After a warm-up it prints the server's CPU per task (this process: the server alone) and the
 * garbage collector's pauses by kind, as counts and µs per task. Under ts-node this process also
 * loads node:domain (through ts-node's repl), which the benchmark's compiled servers do not:
 * compare toolstream and the limit run the same way, not these figures with the benchmark's.
 */
import type { Server } from 'node:http';
import { loadavg } from 'node:os';
import { watchGcPauses } from './lib/gc-pauses';
import { LoadProcess } from './lib/processes';


async function serve(target: string): Promise<{ server: Server; rpcPath: string }> {
  if (target === 'limit') return { server: (await import('./servers/limit-server')).createLimitServer(), rpcPath: '/' };
  return (await import('./servers/toolstream-server')).createToolstreamServer();
}

async function main(): Promise<void> {
  const tasks = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 5_000);
  const target = process.argv.find((a) => a.startsWith('--target='))?.slice('--target='.length) ?? 'toolstream';
  const { server, rpcPath } = await serve(target);
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${rpcPath}`;
  const load = await LoadProcess.start();
  const scenario = { toolCalls: 0, intervalMs: 0, idle: false };
  try {
    // Warm-up past the in-memory store's 10,000 retained tasks, so the measured tasks evict as many.
    await load.run({ url, streams: target === 'limit' ? 2_000 : 12_000, maxOpen: 1, scenario, timeLimitMs: 300_000 });
    const gcWatch = watchGcPauses();
    const cpu = process.cpuUsage();
    const result = await load.run({ url, streams: tasks, maxOpen: 1, scenario, timeLimitMs: 300_000 });
    const used = process.cpuUsage(cpu);
    const pauses = await gcWatch.stop(100);
    if (result.completed !== tasks) throw new Error(`${tasks - result.completed} tasks did not complete: ${result.errors.slice(0, 3).join('; ')}`);
    const gc = [...pauses].map(([kind, { count, ms }]) => `${kind} ${count}× ${((ms * 1000) / tasks).toFixed(1)} µs/task`).join(', ');
    console.log(`${target}: ${((used.user + used.system) / tasks).toFixed(0)} µs of CPU per empty task; GC pauses ${gc}; load average ${loadavg()[0].toFixed(1)}`);
  } finally {
    await load.stop();
    server.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);

/**
 * `node -r ts-node/register/transpile-only bench/request-counts.ts [tasks=1000] [--target=limit|floor] [--warm=N] [--sites[=N]]`
 *
 * What an empty task makes that the machine's load does not move: the async resources the server
 * creates per task, by type (promises, `TickObject` for process.nextTick, `Microtask` for
 * queueMicrotask, timers, sockets...), counted by an async hook's `init` over `tasks` empty tasks
 * after a warm-up (3,000 by default), the server in this process as bench/empty-task-gc.ts runs it
 * (compiled the same way, or under ts-node: the counts are the same), the load generator in its
 * own. Prints one line per type, per task. This process's own bookkeeping of the run (one job to
 * the load generator and its result back) is in the counts too, once per run: ~0.01 per task.
 * `--sites` also names where the promises are made: each promise's creation stack (an Error's,
 * which slows every task) by its innermost frame outside node:internal, in node_modules or src/,
 * and, under a builtin's frame (Promise.then, new Promise), its caller's: the N (12 by default)
 * largest, per task.
 */
import { createHook } from 'node:async_hooks';
import { loadavg } from 'node:os';
import { startInProcessServer } from './lib/in-process-server';

function site(stack: string | undefined): string {
  const frames: string[] = [];
  for (const line of (stack ?? '').split('\n').slice(1)) {
    if (line.includes('node:internal') || line.includes('request-counts')) continue;
    const at = line.trim().replace(/^at /, '');
    const path = at.replace(/.*?(node_modules\/|src\/|bench\/)/, '$1').replace(/\)$/, '');
    const fn = at.includes(' (') ? at.slice(0, at.indexOf(' (')) : '';
    frames.push(`${fn} ${path}`.trim());
    // A builtin's frame (Promise.then, new Promise, Promise.all) is named with its caller's.
    if (!at.includes('<anonymous>')) break;
  }
  return frames.length > 0 ? frames.join(' < ') : '(node internals only)';
}

async function main(): Promise<void> {
  const tasks = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 1_000);
  const option = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`) || a === `--${name}`)?.slice(name.length + 3);
  const target = option('target') ?? 'toolstream';
  const sites = option('sites');
  const siteCount = sites === undefined ? 0 : Number(sites || 12);
  const server = await startInProcessServer(target);
  try {
    await server.emptyTasks(Number(option('warm') ?? 3_000));
    const byType = new Map<string, number>();
    const bySite = new Map<string, number>();
    let counting = false;
    const hook = createHook({
      init(_id, type) {
        if (!counting) return;
        byType.set(type, (byType.get(type) ?? 0) + 1);
        if (siteCount > 0 && type === 'PROMISE') {
          const holder: { stack?: string } = {};
          Error.captureStackTrace(holder);
          const where = site(holder.stack);
          bySite.set(where, (bySite.get(where) ?? 0) + 1);
        }
      },
    });
    if (siteCount > 0) Error.stackTraceLimit = 30;
    hook.enable();
    counting = true;
    await server.emptyTasks(tasks);
    counting = false;
    hook.disable();
    const rows = [...byType].sort((a, b) => b[1] - a[1]).map(([type, n]) => `${type} ${(n / tasks).toFixed(2)}`);
    console.log(`${target}: per empty task over ${tasks} after the warm-up: ${rows.join(', ')}; load average ${loadavg()[0].toFixed(1)}`);
    for (const [where, n] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, siteCount)) console.log(`  ${(n / tasks).toFixed(2)}  ${where}`);
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

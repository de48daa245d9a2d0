/**
 * For the probes that read the server's own process (its GC, heap, threads, CPU profile): a
 * bench server in this process (toolstream's as bench/servers/toolstream-server.ts builds it, the
 * limit, or the framework floor) on a free loopback port, keep-alive off as the bench's servers
 * run, and the load generator in a process of its own.
 */
import { join } from 'node:path';
import type { ServerUnderTest } from '../servers/server-under-test';
import type { LoadResult } from '../load/load-types';
import { LoadProcess, useCompiledChildren } from './processes';
import { EMPTY_TASK } from './scenario';

export interface InProcessServer {
  load: LoadProcess;
  url: string;
  /** `tasks` empty tasks, one after another; throws unless every one completed. */
  emptyTasks(tasks: number): Promise<LoadResult>;
  stop(): Promise<void>;
}

async function create(target: string): Promise<ServerUnderTest> {
  if (target === 'limit') return { server: (await import('../servers/limit-server')).createLimitServer(), rpcPath: '/' };
  if (target === 'floor') return (await import('../servers/floor-server')).createFloorServer();
  return (await import('../servers/toolstream-server')).createToolstreamServer();
}

/** @param target 'limit', 'floor', or anything else for toolstream */
export async function startInProcessServer(target: string): Promise<InProcessServer> {
  // Compiled (a probe built with tsc), the load generator runs from the same compiled tree.
  if (__filename.endsWith('.js')) useCompiledChildren(join(__dirname, '..'));
  const { server, rpcPath } = await create(target);
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${rpcPath}`;
  const load = await LoadProcess.start().catch((err: unknown) => {
    server.close();
    throw err;
  });
  return {
    load,
    url,
    emptyTasks: async (tasks) => {
      const result = await load.run({ url, streams: tasks, maxOpen: 1, scenario: EMPTY_TASK, timeLimitMs: 3_000_000 });
      if (result.completed !== tasks) throw new Error(`${tasks - result.completed} tasks did not complete: ${result.errors.slice(0, 3).join('; ')}`);
      return result;
    },
    stop: async () => {
      await load.stop();
      server.close();
    },
  };
}

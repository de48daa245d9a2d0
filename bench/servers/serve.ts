/**
 * Child-process entry of one server under test: `serve.ts <target>`. Listens on a free
 * loopback port, tells the harness which, and answers its CPU and memory probes.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { getHeapSpaceStatistics } from 'node:v8';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { trace, type ProxyTracerProvider } from '@opentelemetry/api';
import { youngCollector } from '../lib/collect-young';
import type { ServerCommand, ServerReply, Target } from '../lib/ipc';
import type { ServerUnderTest } from './server-under-test';

async function createServer(target: Target): Promise<ServerUnderTest> {
  switch (target) {
    case 'limit':
      return { server: (await import('./limit-server')).createLimitServer(), rpcPath: '/' };
    case 'reference':
      return { server: (await import('./reference-server')).createReferenceServer('per-frame'), rpcPath: '/' };
    case 'reference-per-call':
      return { server: (await import('./reference-server')).createReferenceServer('per-call'), rpcPath: '/' };
    case 'floor':
      return (await import('./floor-server')).createFloorServer();
    case 'toolstream':
      return (await import('./toolstream-server')).createToolstreamServer();
    case 'toolstream-redis': {
      const url = process.env.BENCH_REDIS_URL;
      if (!url) throw new Error('toolstream-redis needs BENCH_REDIS_URL (the harness starts the redis-server)');
      return (await import('./toolstream-server')).createToolstreamServer(url);
    }
  }
}

function reply(message: ServerReply): void {
  process.send?.(message);
}

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the server with --expose-gc to measure memory');
  gc();
  gc();
}

async function main(): Promise<void> {
  const target = process.argv[2] as Target;
  const { server, rpcPath } = await createServer(target);
  // Thousands of idle streams: no per-socket timeouts, a deep accept queue.
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.maxConnections = Infinity;
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  let profiler: Session | undefined;
  let allocations: Session | undefined;
  let collectYoung: (() => void) | undefined;
  let gcPauses: { scavenges: number[]; others: number[]; observer: PerformanceObserver } | undefined;
  process.on('message', (command: ServerCommand) => {
    if (command.type === 'gc-pauses') {
      // Recorded only once asked for: the other sections' servers run without the observer.
      if (!gcPauses) {
        const pauses = { scavenges: [] as number[], others: [] as number[] };
        const observer = new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) {
            const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
            (kind === constants.NODE_PERFORMANCE_GC_MINOR ? pauses.scavenges : pauses.others).push(entry.duration);
          }
        });
        observer.observe({ entryTypes: ['gc'] });
        gcPauses = { ...pauses, observer };
      }
      const spaces = getHeapSpaceStatistics();
      const old = spaces.find((space) => space.space_name === 'old_space');
      const young = spaces.find((space) => space.space_name === 'new_space');
      reply({
        type: 'gc-pauses',
        scavenges: gcPauses.scavenges.splice(0),
        others: gcPauses.others.splice(0),
        oldSpaceFreeBytes: old ? old.space_size - old.space_used_size : NaN,
        newSpaceCapacityBytes: young ? young.space_used_size + young.space_available_size : NaN,
        oldSpaceUsedBytes: old ? old.space_used_size : NaN,
        largeObjectSpaceUsedBytes: spaces.find((space) => space.space_name === 'large_object_space')?.space_used_size ?? NaN,
      });
    } else if (command.type === 'alloc-start') {
      allocations = new Session();
      allocations.connect();
      collectYoung = command.survivors ? youngCollector() : undefined;
      // Collected objects included: what a scavenge reclaims is what makes it come.
      allocations.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !command.survivors }, () =>
        reply({ type: 'alloc-started' }),
      );
    } else if (command.type === 'alloc-stop') {
      collectYoung?.();
      allocations?.post('HeapProfiler.stopSampling', (err, result) => {
        if (err) throw err;
        writeFileSync(command.file, JSON.stringify(result.profile));
        allocations?.disconnect();
        allocations = undefined;
        reply({ type: 'alloc-written', file: command.file });
      });
    } else if (command.type === 'profile-start') {
      profiler = new Session();
      profiler.connect();
      profiler.post('Profiler.enable', () =>
        profiler?.post('Profiler.setSamplingInterval', { interval: 200 }, () => profiler?.post('Profiler.start', () => reply({ type: 'profile-started' }))),
      );
    } else if (command.type === 'profile-stop') {
      profiler?.post('Profiler.stop', (err, result) => {
        if (err) throw err;
        writeFileSync(command.file, JSON.stringify(result.profile));
        profiler?.disconnect();
        profiler = undefined;
        reply({ type: 'profile-written', file: command.file });
      });
    } else if (command.type === 'flush-spans') {
      // The SDK's provider behind the API's proxy; without an SDK it is the no-op one (nothing to flush).
      const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as { forceFlush?: () => Promise<void> };
      void Promise.resolve(provider.forceFlush?.()).then(() => reply({ type: 'spans-flushed' }));
    } else if (command.type === 'span-floor') {
      void import('../lib/sdk-span-floor').then(async ({ measureSdkSpanFloor }) => reply({ type: 'span-floor', ...(await measureSdkSpanFloor(command.spans)) }));
    } else if (command.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      reply({ type: 'cpu', userUs: user, systemUs: system });
    } else {
      if (command.gc) collectGarbage();
      const { rss, heapUsed, external } = process.memoryUsage();
      reply({ type: 'memory', rss, heapUsed, external });
    }
  });
  process.on('disconnect', () => process.exit(0));
  reply({ type: 'listening', port: address.port, rpcPath });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

/**
 * (a) toolstream: the real application (AppModule, every module as `npm start` boots it) with
 * one provider swapped: the AgentExecutor plays the scripted scenario. Frames therefore enter
 * at the runtime's topics and cross the runtime, the bus and the A2A server to the wire.
 *
 * One setting differs from the defaults: the limits on live tasks (1,000, and 500 per caller)
 * are raised above the benchmark's 10,000 concurrent streams from one caller, which measure the
 * pipeline, not admission control.
 *
 * `BENCH_OBSERVABILITY` (the observability section): `off` runs it without metrics (no
 * /metrics, no tool-call counting) and without an OpenTelemetry SDK; `on` starts the Node SDK
 * first, exactly as the demo app does from the OTEL_* variables the section sets (its default
 * BatchSpanProcessor and OTLP http/protobuf exporter, to the section's receiver), and keeps the
 * metrics; `tracing` and `metrics` have one of the two. Unset: the app as it boots (metrics on, no SDK: tracing
 * through the API is a no-op).
 */
import type { Server } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { A2A_CONFIG, A2A_MODULE_OPTIONS, ExpressPrototypesAdapter, resolveA2aConfig, type A2aModuleOptions } from '../../src/a2a';
import { AppModule } from '../../src/app.module';
import { AgentExecutor } from '../../src/executor';
import { ToolstreamMetrics } from '../../src/metrics';
import { startTracingFromEnv } from '../../src/otel-sdk';
import { BenchAgentExecutor } from './bench-agent-executor';
import type { ServerUnderTest } from './server-under-test';

const BENCH_LIVE_TASKS = 20_000;

/** @param redisUrl when set, the task store is in Redis there (A2aModule option `redis`) */
export async function createToolstreamServer(redisUrl?: string): Promise<ServerUnderTest> {
  const observability = process.env.BENCH_OBSERVABILITY;
  const tracing = observability === 'on' || observability === 'tracing';
  const metrics = observability === undefined || observability === 'on' || observability === 'metrics';
  if (tracing && !(await startTracingFromEnv())) {
    throw new Error(`BENCH_OBSERVABILITY=${observability} needs OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the observability section starts a receiver)`);
  }
  if (!metrics) process.env.TOOLSTREAM_METRICS_PATH = 'off';
  let builder = Test.createTestingModule({ imports: [AppModule] });
  // Without metrics the service is not there at all (it would count every tool call even unscraped).
  if (!metrics) builder = builder.overrideProvider(ToolstreamMetrics).useValue({});
  const moduleRef = await builder
    .overrideProvider(AgentExecutor)
    .useClass(BenchAgentExecutor)
    .overrideProvider(A2A_CONFIG)
    .useFactory({
      factory: (options: A2aModuleOptions) =>
        resolveA2aConfig({
          ...options,
          maxLiveTasks: BENCH_LIVE_TASKS,
          maxLiveTasksPerCaller: BENCH_LIVE_TASKS,
          // Redis mode: every run of the load at once, as in memory (the run queue's default is 32 per process).
          ...(redisUrl ? { redis: { connection: redisUrl, maxConcurrentRuns: BENCH_LIVE_TASKS } } : {}),
        }),
      inject: [A2A_MODULE_OPTIONS],
    })
    .compile();
  // As src/main.ts boots it: A2aModule reads the A2A routes' bodies itself, so the application
  // has no global JSON and urlencoded parsers in front of every request; no X-Powered-By;
  // requests and responses born on Express's prototypes.
  const app = moduleRef.createNestApplication<NestExpressApplication>(new ExpressPrototypesAdapter(), { logger: ['error'], bodyParser: false });
  app.disable('x-powered-by');
  await app.init();
  return { server: app.getHttpServer() as Server, rpcPath: '/a2a', close: () => app.close() };
}

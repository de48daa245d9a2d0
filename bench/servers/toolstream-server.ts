/**
 * (a) toolstream: the real application (AppModule, every module as `npm start` boots it) with
 * one provider swapped: the AgentExecutor plays the scripted scenario. Frames therefore enter
 * at the runtime's topics and cross the runtime, the bus and the A2A server to the wire.
 *
 * One setting differs from the defaults: the limits on live tasks (1,000, and 500 per caller)
 * are raised above the benchmark's 10,000 concurrent streams from one caller, which measure the
 * pipeline, not admission control.
 */
import type { Server } from 'node:http';
import { Test } from '@nestjs/testing';
import { A2A_CONFIG, A2A_MODULE_OPTIONS, resolveA2aConfig, type A2aModuleOptions } from '../../src/a2a';
import { AppModule } from '../../src/app.module';
import { AgentExecutor } from '../../src/executor';
import { BenchAgentExecutor } from './bench-agent-executor';
import type { ServerUnderTest } from './server-under-test';

const BENCH_LIVE_TASKS = 20_000;

/** @param redisUrl when set, the task store is in Redis there (A2aModule option `redis`) */
export async function createToolstreamServer(redisUrl?: string): Promise<ServerUnderTest> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(AgentExecutor)
    .useClass(BenchAgentExecutor)
    .overrideProvider(A2A_CONFIG)
    .useFactory({
      factory: (options: A2aModuleOptions) =>
        resolveA2aConfig({
          ...options,
          maxLiveTasks: BENCH_LIVE_TASKS,
          maxLiveTasksPerCaller: BENCH_LIVE_TASKS,
          ...(redisUrl ? { redis: { connection: redisUrl } } : {}),
        }),
      inject: [A2A_MODULE_OPTIONS],
    })
    .compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return { server: app.getHttpServer() as Server, rpcPath: '/a2a' };
}

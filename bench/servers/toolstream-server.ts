/**
 * (a) toolstream: the real application (AppModule, every module as `npm start` boots it) with
 * one provider swapped: the AgentExecutor plays the scripted scenario. Frames therefore enter
 * at the runtime's topics and cross the runtime, the bus and the A2A server to the wire.
 */
import type { Server } from 'node:http';
import { Test } from '@nestjs/testing';
import { AppModule } from '../../src/app.module';
import { AgentExecutor } from '../../src/executor';
import { BenchAgentExecutor } from './bench-agent-executor';
import type { ServerUnderTest } from './server-under-test';

export async function createToolstreamServer(): Promise<ServerUnderTest> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(AgentExecutor)
    .useClass(BenchAgentExecutor)
    .compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return { server: app.getHttpServer() as Server, rpcPath: '/a2a' };
}

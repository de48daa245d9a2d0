import { Global, Module, type INestApplication, type NestApplicationOptions } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { A2aModule, InMemoryTaskStore, TaskService, TaskStore, type A2aModuleOptions, type A2aModuleExtras } from '../../src/a2a';
import type { TaskRecord } from '../../src/a2a/task-record';
import type { RedisTaskStore } from '../../src/a2a/store/redis-task-store';
import { AgentBus, EventEmitterAgentBus } from '../../src/runtime';
import { ScriptedWorker, type Script } from './scripted-worker';

/** The bus alone (as RuntimeModule provides it), without an executor: the scripted worker serves it. */
@Global()
@Module({
  imports: [EventEmitterModule.forRoot({ wildcard: false, maxListeners: 0, ignoreErrors: false })],
  providers: [{ provide: AgentBus, useClass: EventEmitterAgentBus }],
  exports: [AgentBus],
})
export class ScriptedBusModule {}

export interface ScriptedA2aApp {
  app: INestApplication;
  base: string;
  bus: AgentBus;
  worker: ScriptedWorker;
  tasks: TaskService;
  /** A task this instance writes, as it is now (synchronous, for polling). */
  record(id: string): TaskRecord | undefined;
  close(): Promise<void>;
}

/** A2aModule on a real port, served by a ScriptedWorker (`appOptions` e.g. `bodyParser: false`, as the demo app has). */
export async function startScriptedA2aApp(script: Script, options: A2aModuleOptions & A2aModuleExtras = {}, appOptions: NestApplicationOptions = {}): Promise<ScriptedA2aApp> {
  const moduleRef = await Test.createTestingModule({ imports: [ScriptedBusModule, A2aModule.forRoot(options)] }).compile();
  // Closing the app must not wait for the keep-alive sockets fetch leaves open.
  const app = moduleRef.createNestApplication({ logger: ['error', 'warn'], forceCloseConnections: true, ...appOptions });
  await app.listen(0, '127.0.0.1');
  const bus = app.get(AgentBus);
  const worker = new ScriptedWorker(bus, script).start();
  return {
    app,
    base: await app.getUrl(),
    bus,
    worker,
    tasks: app.get(TaskService),
    record: (id) => (app.get(TaskStore) as InMemoryTaskStore | RedisTaskStore).record(id),
    close: async () => {
      worker.stop();
      await app.close();
    },
  };
}

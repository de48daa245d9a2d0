import { Module } from '@nestjs/common';
import { EventEmitter2 } from 'eventemitter2';
import { optionalOptions, requireForRoot } from '../common/require-for-root';
import { AgentBus } from './agent-bus';
import { AgentRuntimeService } from './agent-runtime.service';
import { EventEmitterAgentBus } from './event-emitter-agent-bus';
import { RuntimeEmitter } from './runtime-emitter';
import { Narrator } from './narration';
import { NARRATOR, RUNTIME_EMITTER } from './runtime.constants';
import { checkRuntimeOptions, ConfigurableModuleClass, RUNTIME_MODULE_OPTIONS, type RuntimeModuleOptions } from './runtime.module-definition';

/**
 * Bridges agent runs onto bus topics. The default bus runs on an EventEmitter2 of its own, so
 * it neither depends on nor changes the application's emitter (EventEmitterModule.forRoot is the
 * application's call): a RuntimeEmitter (an EventEmitter2 that keeps task topics' subscribers in a
 * Map), wildcard off (with it on, each listener removal walks the whole tree:
 * 2.5 ms per on/off at 10k live topics against 2 µs) and no max-listener limit, since thousands
 * of concurrent tasks each hold a few listeners.
 */
@Module({
  providers: [
    { provide: RUNTIME_EMITTER, useFactory: () => new RuntimeEmitter() },
    { provide: AgentBus, inject: [RUNTIME_EMITTER], useFactory: (emitter: EventEmitter2) => new EventEmitterAgentBus(emitter) },
    {
      provide: NARRATOR,
      inject: [optionalOptions(RUNTIME_MODULE_OPTIONS)],
      useFactory: (options?: RuntimeModuleOptions): Narrator => new Narrator(checkRuntimeOptions(requireForRoot('RuntimeModule', options)).narration),
    },
    AgentRuntimeService,
  ],
  exports: [AgentBus, AgentRuntimeService, NARRATOR],
})
export class RuntimeModule extends ConfigurableModuleClass {}

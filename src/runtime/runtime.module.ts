import { Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { optionalOptions, requireForRoot } from '../common/require-for-root';
import { AgentBus } from './agent-bus';
import { AgentRuntimeService } from './agent-runtime.service';
import { EventEmitterAgentBus } from './event-emitter-agent-bus';
import { Narrator } from './narration';
import { NARRATOR } from './runtime.constants';
import { ConfigurableModuleClass, RUNTIME_MODULE_OPTIONS, type RuntimeModuleOptions } from './runtime.module-definition';

/**
 * Bridges agent runs onto bus topics. EventEmitter2 runs with wildcard off (with it on, each
 * listener removal walks the whole tree: 2.5 ms per on/off at 10k live topics against 2 µs) and
 * without a max-listener limit, since thousands of concurrent tasks each hold a few listeners.
 */
@Module({
  imports: [EventEmitterModule.forRoot({ wildcard: false, maxListeners: 0, ignoreErrors: false })],
  providers: [
    { provide: AgentBus, useClass: EventEmitterAgentBus },
    {
      provide: NARRATOR,
      inject: [optionalOptions(RUNTIME_MODULE_OPTIONS)],
      useFactory: (options?: RuntimeModuleOptions): Narrator => new Narrator(requireForRoot('RuntimeModule', options).narration),
    },
    AgentRuntimeService,
  ],
  exports: [AgentBus, AgentRuntimeService, NARRATOR],
})
export class RuntimeModule extends ConfigurableModuleClass {}

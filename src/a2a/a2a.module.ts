import { Inject, Module, Optional, type MiddlewareConsumer, type NestModule, type OnModuleInit } from '@nestjs/common';
import { MODULE_PATH } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { optionalOptions, requireForRoot } from '../common/require-for-root';
import { A2A_CONFIG, A2A_EXTENSIONS, A2A_ROLE } from './a2a.constants';
import type { AgentExtension } from '@a2a-js/sdk';
import { AGENT_EXTENSIONS } from '../extensions/extensions.constants';
import { A2A_MODULE_OPTIONS, ConfigurableModuleClass, resolveA2aConfig, type A2aModuleOptions } from './a2a.module-definition';
import { A2aJsonBodyMiddleware } from './a2a-json-body.middleware';
import { A2aController } from './a2a.controller';
import { A2aService } from './a2a.service';
import { AgentCardService } from './agent-card.service';
import { A2aPreRouteErrors } from './pre-route-errors';
import { A2aValidationPipe } from './dto/a2a-validation.pipe';
import { RestNegotiationGuard } from './rest-negotiation.guard';
import { TaskService } from './task.service';
import { TaskStore } from './store/task-store';
import type { A2aConfig, ToolstreamRole } from './a2a.module-definition';
import { createTaskStore } from './store/create-task-store';
import { A2aAuthGuard } from './auth/a2a-auth.guard';
import { A2aAuthService } from './auth/a2a-auth.service';
import { A2aDrainService } from './shutdown/a2a-drain.service';
import { ClientStreams } from './streams/client-streams';
import { A2aDrainHealth } from './shutdown/a2a-drain.health';
import { TaskStoreHealth } from './store/task-store.health';
import { DrainGuard } from './shutdown/drain.guard';
import { MessageLimitsPipe } from './limits/message-limits.pipe';

/**
 * The A2A server: agent card, JSON-RPC binding (0.3 and 1.0) at `/a2a`, HTTP+JSON binding
 * (1.0) at the root, tasks with replayable event streams. It talks to agent runs only through
 * the AgentBus, which RuntimeModule (or a backend's own transport) provides globally.
 *
 * ```ts
 * A2aModule.forRoot({ card: { name: 'Support agent', skills: [...] }, cancelOnDisconnect: false })
 * ```
 */
@Module({
  // The controllers come with forRoot / forRootAsync (see the module definition): a worker has none.
  providers: [
    {
      provide: A2A_CONFIG,
      inject: [optionalOptions(A2A_MODULE_OPTIONS)],
      useFactory: (options?: A2aModuleOptions) => resolveA2aConfig(requireForRoot('A2aModule', options)),
    },
    {
      // After A2A_CONFIG, so a bare import fails saying so rather than with a missing AGENT_EXTENSIONS.
      provide: A2A_EXTENSIONS,
      inject: [A2A_CONFIG, optionalOptions(AGENT_EXTENSIONS)],
      useFactory: (_config: A2aConfig, extensions?: AgentExtension[]) => {
        if (!extensions) throw new Error('A2aModule: its extensions module provides no AGENT_EXTENSIONS (use ExtensionsModule.forRoot({...}))');
        return extensions;
      },
    },
    {
      provide: TaskStore,
      inject: [A2A_CONFIG, optionalOptions(A2A_ROLE)],
      useFactory: (config: A2aConfig, role: ToolstreamRole = 'all') => createTaskStore(config, role),
    },
    TaskService,
    A2aService,
    AgentCardService,
    A2aValidationPipe,
    RestNegotiationGuard,
    A2aAuthService,
    A2aAuthGuard,
    A2aDrainService,
    A2aDrainHealth,
    TaskStoreHealth,
    DrainGuard,
    ClientStreams,
    MessageLimitsPipe,
    A2aPreRouteErrors,
    A2aJsonBodyMiddleware,
  ],
  exports: [TaskService, TaskStore, AgentCardService, A2aAuthService, A2aDrainService, A2A_CONFIG],
})
export class A2aModule extends ConfigurableModuleClass implements NestModule, OnModuleInit {
  constructor(
    private readonly preRouteErrors: A2aPreRouteErrors,
    private readonly body: A2aJsonBodyMiddleware,
    private readonly modules: ModulesContainer,
    @Optional() @Inject(A2A_ROLE) private readonly role?: string,
  ) {
    super();
  }

  /** Runs once the routes are registered: where RouterModule mounted this module is known by then. */
  onModuleInit(): void {
    if (this.role === 'worker') return; // no A2A route to answer for
    // Read as Nest's router reads it (RouterModule keys the path by application).
    const path = (Reflect.getMetadata(MODULE_PATH + this.modules.applicationId, A2aModule) ?? Reflect.getMetadata(MODULE_PATH, A2aModule)) as string | undefined;
    this.preRouteErrors.mount(path);
  }

  /**
   * The HTTP+JSON routes read their bodies in this middleware (the provider's instance: one set
   * of body deadlines for both bindings); the JSON-RPC route reads its own in its handler, with
   * the same instance, without Nest's per-request middleware wrappers (see A2aJsonRpcController).
   */
  configure(consumer: MiddlewareConsumer): void {
    const body = this.body;
    consumer.apply((req: Request, res: Response, next: NextFunction) => body.use(req, res, next)).forRoutes(A2aController);
  }
}

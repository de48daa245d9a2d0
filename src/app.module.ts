import { Module, type DynamicModule } from '@nestjs/common';
import { A2aModule, type A2aModuleOptions, type ToolstreamRole } from './a2a';
import { a2aOptionsFromEnv, DEMO_ENV, executorOptionsFromEnv, metricsOptionsFromEnv } from './app.config';
import type { DemoRemoteAgents } from './demo/remote-agents';
import { createDemoTools } from './demo/tools/demo-tools';
import { ExecutorModule } from './executor';
import { ExtensionsModule } from './extensions/extensions.module';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { RuntimeModule } from './runtime';
import { WebModule } from './web';

const card: NonNullable<A2aModuleOptions['card']> = {
  name: 'toolstream demo agent',
  description:
    'An offline LangGraph agent with demo tools (weather, world clock, calculator, docs) that streams a live per-tool timeline (tool-call-v1) beside plain-text narration.',
  skills: [
    {
      id: 'weather-and-time',
      name: 'Weather and time',
      description: 'Current weather of about twenty cities and the time anywhere, in parallel.',
      tags: ['weather', 'time'],
      // The page offers these as its example questions; several asks in one run tools in parallel.
      examples: ['What is the weather in Paris and the time in Tokyo?', 'Weather in Berlin, wait 2 seconds and read the doc nope'],
    },
    {
      id: 'calculator',
      name: 'Calculator',
      description: 'Arithmetic expressions with parentheses and functions.',
      tags: ['math'],
      examples: ['What is 12 * (3 + 4) and 1 / 0?'],
    },
    {
      id: 'docs',
      name: 'Docs',
      description: 'Searches and reads the bundled documentation.',
      tags: ['search', 'docs'],
      examples: ['Search the docs for reconnect'],
    },
  ],
};

/**
 * The remote agents of TOOLSTREAM_REMOTE_AGENTS: read at boot, once, for the tools, narration and
 * card. Their A2A client is loaded only when the variable names some (it is ~0.6 MB of heap).
 */
const remoteAgents = async (): Promise<DemoRemoteAgents> => {
  if (!process.env[DEMO_ENV.remoteAgents]?.trim()) return { tools: [], skills: [], phrases: {} };
  const { loadRemoteAgents } = await import('./demo/remote-agents');
  return loadRemoteAgents(process.env, createDemoTools().map((t) => t.name));
};

/**
 * The demo application's modules for a role (TOOLSTREAM_ROLE): `all` is every module; `api` runs
 * no agents (no executor; its runs go to the Redis run queue); `worker` serves /healthz only
 * and runs agents from the queue.
 */
function demoImports(role: ToolstreamRole): NonNullable<DynamicModule['imports']> {
  const runsAgents = role !== 'api';
  return [
    ExtensionsModule.forRoot(),
    RuntimeModule.forRootAsync({
      useFactory: async () => ({ narration: { phrases: (await remoteAgents()).phrases }, serveRequests: runsAgents }),
      executor: runsAgents
        ? ExecutorModule.forRootAsync({ useFactory: async () => executorOptionsFromEnv(process.env, (await remoteAgents()).tools) })
        : undefined,
    }),
    A2aModule.forRootAsync({
      useFactory: async () => ({ ...a2aOptionsFromEnv(), card: { ...card, skills: [...(card.skills ?? []), ...(await remoteAgents()).skills] } }),
      role,
    }),
    HealthModule,
    ...(role === 'worker' ? [] : [MetricsModule.forRootAsync({ useFactory: () => metricsOptionsFromEnv() }), WebModule.forRoot({})]),
  ];
}

/**
 * The demo application: every toolstream module on its offline defaults, with time budgets for
 * runs and tools, and settings from the environment (see app.config.ts), read at boot.
 */
@Module({ imports: demoImports('all') })
export class AppModule {}

/** The demo application in one role (what main.ts boots: TOOLSTREAM_ROLE). */
@Module({})
export class DemoRoleModule {
  static forRole(role: ToolstreamRole): DynamicModule {
    return { module: DemoRoleModule, imports: demoImports(role) };
  }
}

import { ConfigurableModuleBuilder, type DynamicModule, type Type } from '@nestjs/common';
import { ExtensionsModule } from '../extensions';

/** One skill on the agent card (A2A `AgentSkill`, without security requirements). */
export interface A2aSkillOptions {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

/** What the agent card says about the agent; every field has an offline-demo default. */
export interface A2aAgentCardOptions {
  name?: string;
  description?: string;
  /** The agent's own version (not the protocol's). */
  version?: string;
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  skills?: A2aSkillOptions[];
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
}

export interface A2aModuleOptions {
  card?: A2aAgentCardOptions;
  /**
   * Base URL the card advertises (e.g. `https://agents.example.com/api`). When unset, the URLs
   * are derived from each card request: its protocol, Host, and the path before
   * `/.well-known/agent-card.json` (so a global prefix is kept).
   */
  publicUrl?: string;
  /** Send tool-call-v1 frames to clients that send no extension header at all (default true). */
  toolFramesWhenNoExtensionHeader?: boolean;
  /**
   * Cancel the task when the client that started it (SendStreamingMessage, or a blocking
   * SendMessage) disconnects before it ends (default true). When false the run goes on and the
   * client can rejoin with SubscribeToTask.
   */
  cancelOnDisconnect?: boolean;
  /**
   * With cancelOnDisconnect, how long a task whose client dropped waits for a client to rejoin
   * (SubscribeToTask, or a resume with Last-Event-ID) before it is cancelled (default 3000 ms;
   * 0 cancels at once). A page that reconnects after a network blip keeps its run.
   */
  disconnectGraceMs?: number;
  /** Interval of the `: keep-alive` comment on every open stream (default 15000 ms). */
  keepAliveMs?: number;
  /** How long a finished task stays readable (GetTask, replay) before it is forgotten (default 1 hour). */
  taskTtlMs?: number;
  /**
   * Events kept per task for replay (default 10000). Past it the oldest are dropped; a client
   * resuming from a dropped event gets a Task snapshot first, then the live events.
   */
  maxEventsPerTask?: number;
  /**
   * After CancelTask, how long the runtime has to answer "cancelled" before the task is settled
   * as cancelled regardless, its open tools closed as failed (default 5000 ms).
   */
  cancelTimeoutMs?: number;
  /** Largest `application/a2a+json` body read by the HTTP+JSON binding (default 1 MiB). */
  maxBodyBytes?: number;
}

export interface A2aModuleExtras {
  /**
   * The module providing AGENT_EXTENSIONS (e.g. `ExtensionsModule.forRoot({...})`);
   * defaults to ExtensionsModule with tool-call-v1 alone.
   */
  extensions?: Type | DynamicModule;
}

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: A2A_MODULE_OPTIONS,
  OPTIONS_TYPE: A2A_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: A2A_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<A2aModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras<A2aModuleExtras>({}, (definition, extras) => ({
    ...definition,
    imports: [...(definition.imports ?? []), extras.extensions ?? ExtensionsModule],
  }))
  .build();

/** The options with every default applied: what the services read. */
export interface A2aConfig {
  card: Required<Pick<A2aAgentCardOptions, 'name' | 'description' | 'version' | 'skills' | 'defaultInputModes' | 'defaultOutputModes'>> &
    Pick<A2aAgentCardOptions, 'provider' | 'documentationUrl' | 'iconUrl'>;
  publicUrl?: string;
  toolFramesWhenNoExtensionHeader: boolean;
  cancelOnDisconnect: boolean;
  disconnectGraceMs: number;
  keepAliveMs: number;
  taskTtlMs: number;
  maxEventsPerTask: number;
  cancelTimeoutMs: number;
  maxBodyBytes: number;
}

export const A2A_DEFAULTS = {
  keepAliveMs: 15_000,
  disconnectGraceMs: 3_000,
  taskTtlMs: 60 * 60_000,
  maxEventsPerTask: 10_000,
  cancelTimeoutMs: 5_000,
  maxBodyBytes: 1024 * 1024,
} as const;

export function resolveA2aConfig(options: A2aModuleOptions = {}): A2aConfig {
  const card = options.card ?? {};
  return {
    card: {
      name: card.name ?? 'toolstream agent',
      description:
        card.description ??
        'A LangGraph agent that streams a live per-tool timeline (tool-call-v1) beside plain-text narration.',
      version: card.version ?? '0.1.0',
      provider: card.provider,
      documentationUrl: card.documentationUrl,
      iconUrl: card.iconUrl,
      skills: card.skills ?? [
        {
          id: 'assistant',
          name: 'Tool-using assistant',
          description: 'Answers questions by calling tools, narrating each step and streaming each tool call.',
          tags: ['tools', 'streaming'],
        },
      ],
      defaultInputModes: card.defaultInputModes ?? ['text/plain', 'application/json'],
      defaultOutputModes: card.defaultOutputModes ?? ['text/plain', 'application/json'],
    },
    publicUrl: options.publicUrl?.replace(/\/+$/, ''),
    toolFramesWhenNoExtensionHeader: options.toolFramesWhenNoExtensionHeader ?? true,
    cancelOnDisconnect: options.cancelOnDisconnect ?? true,
    disconnectGraceMs: nonNegative(options.disconnectGraceMs, 'disconnectGraceMs') ?? A2A_DEFAULTS.disconnectGraceMs,
    keepAliveMs: positive(options.keepAliveMs, 'keepAliveMs') ?? A2A_DEFAULTS.keepAliveMs,
    taskTtlMs: positive(options.taskTtlMs, 'taskTtlMs') ?? A2A_DEFAULTS.taskTtlMs,
    maxEventsPerTask: positive(options.maxEventsPerTask, 'maxEventsPerTask') ?? A2A_DEFAULTS.maxEventsPerTask,
    cancelTimeoutMs: positive(options.cancelTimeoutMs, 'cancelTimeoutMs') ?? A2A_DEFAULTS.cancelTimeoutMs,
    maxBodyBytes: positive(options.maxBodyBytes, 'maxBodyBytes') ?? A2A_DEFAULTS.maxBodyBytes,
  };
}

/** A misconfigured number fails at boot with its name, not later with a hung stream. */
function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`A2aModule option ${name} must be a positive number, got ${String(value)}`);
  }
  return value;
}

function nonNegative(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`A2aModule option ${name} must be zero or a positive number, got ${String(value)}`);
  }
  return value;
}

import { ConfigurableModuleBuilder, type DynamicModule, type Type } from '@nestjs/common';
import type Redis from 'ioredis';
import { ExtensionsModule } from '../extensions/extensions.module';
import { mountedAt, positiveWholeNumber, wholeNumber as nonNegative } from '../common/module-options';
import { A2A_ROLE } from './a2a.constants';
import { AgentCardController } from './agent-card.controller';
import { A2aController } from './a2a.controller';
import { A2aJsonRpcController } from './a2a-json-rpc.controller';

/** The A2A routes; every role but `worker` mounts them. */
const A2A_CONTROLLERS = [AgentCardController, A2aJsonRpcController, A2aController];

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
  /**
   * A stream whose client has not read for this long while its buffer is full is closed
   * (default 60000 ms); its task goes on and the client resumes with Last-Event-ID. Counted in
   * `TaskService.metrics().stalledStreamsClosed`.
   */
  stalledStreamTimeoutMs?: number;
  /** How long a finished task stays readable (GetTask, replay) before it is forgotten (default 1 hour). */
  taskTtlMs?: number;
  /**
   * Events kept per task for replay (default 10000). Past it the oldest are dropped; a client
   * resuming from a dropped event gets a Task snapshot first, then the live events.
   */
  maxEventsPerTask?: number;
  /**
   * Finished tool calls whose artifacts a task keeps in its snapshot (GetTask, a resume from a
   * trimmed Last-Event-ID), newest first (default 100); open tools are always kept. Every frame
   * stays in the event log, so a stream still carries each one.
   */
  maxFinishedToolsPerTask?: number;
  /**
   * Tasks running at once on this server (default 1000). Past it a new message is refused with
   * HTTP 503 and Retry-After (JSON-RPC -32603), naming the limit. With `redis`: for all instances
   * on that Redis together (a dead instance's tasks count until their lease, `redis.leaseMs`, lapses).
   */
  maxLiveTasks?: number;
  /**
   * Tasks one caller may have running at once (default 500). Past it: HTTP 429 and Retry-After
   * (JSON-RPC -32603), naming the limit. With `redis`: on all instances together.
   */
  maxLiveTasksPerCaller?: number;
  /** Finished tasks kept readable (default 10000); past it the oldest finished is forgotten first. With `redis`: for all instances together. */
  maxRetainedTasks?: number;
  /**
   * Bytes the finished tasks may hold, their retained events and artifacts (default 256 MiB);
   * past it the oldest finished are forgotten first. With `redis`: for all instances together,
   * counted as Redis's MEMORY USAGE of each finished task's hash and event stream.
   */
  maxRetainedBytes?: number;
  /**
   * How long a run may take before its task ends FAILED (its open tools closed as failed) and
   * the run is asked to cancel (default 30 minutes): a run that never answers cannot hold a task
   * and its streams forever.
   */
  runDeadlineMs?: number;
  /**
   * After CancelTask, how long the runtime has to answer "cancelled" before the task is settled
   * as cancelled regardless, its open tools closed as failed (default 5000 ms).
   */
  cancelTimeoutMs?: number;
  /**
   * Largest request body in bytes (default 1 MiB): JSON-RPC and HTTP+JSON bodies that A2aModule
   * reads itself (`application/a2a+json` always, `application/json` when the application has no
   * JSON parser of its own), and any body whose declared Content-Length is larger. Past it: HTTP
   * 413, with JSON-RPC error -32600 on the JSON-RPC binding, naming the limit.
   */
  maxBodyBytes?: number;
  /**
   * Time budget for reading a request body (default 10000 ms), counted once the headers are in
   * and the credentials checked. A body not fully arrived by then: HTTP 408 (JSON-RPC -32600),
   * and the connection is closed.
   */
  bodyTimeoutMs?: number;
  /**
   * How deep arrays and objects may nest in a request body (default 64): deeper is -32600 / HTTP
   * 400, before any recursive walk of the request could overflow the stack.
   */
  maxJsonDepth?: number;
  /** Parts one message may carry (default 64); more is -32602 / HTTP 400 naming the limit. */
  maxPartsPerMessage?: number;
  /** Characters of text one message may hand the agent: its text parts, and data parts as JSON (default 100000). */
  maxTextLength?: number;
  /**
   * Messages one conversation (a contextId, per caller) may hold (default 100): the history
   * handed to the agent grows with each. A message past it is -32602 asking for a new conversation.
   */
  maxHistoryLength?: number;
  /**
   * Cap on each tool-call-v1 frame field from the bus (`args`, `result`, `error`) and on each
   * narration line, in bytes of JSON (default 16 KiB, at least 256): the executor caps its own
   * frames, this caps whatever a custom executor or bus sends. Secret-named keys are redacted too.
   */
  maxFrameFieldBytes?: number;
  /**
   * Credentials for the A2A routes (the agent card and other routes stay public). When unset,
   * read from the environment: `TOOLSTREAM_API_KEYS` and `TOOLSTREAM_BEARER_TOKENS`,
   * comma-separated. No credentials at all: every caller is anonymous. `false`: off, whatever
   * the environment says.
   */
  auth?: A2aAuthOptions | false;
  /**
   * On shutdown by a signal (Nest's beforeApplicationShutdown), how long running tasks have to finish before
   * they are cancelled (default 10000 ms). New requests are refused with 503 from the start.
   */
  drainTimeoutMs?: number;
  /**
   * Keep tasks in Redis instead of this process's memory: event logs (Redis Streams), snapshots,
   * per-owner listings and conversations, readable from every instance on the same Redis. A
   * `redis://` / `rediss://` URL (a password in the URL) or an ioredis client the application
   * owns. Unset: the embedded in-memory store.
   */
  redis?: A2aRedisOptions;
}

export interface A2aRedisOptions {
  /** A URL (the module opens and closes the connection) or a client of the application's, without an ioredis keyPrefix of its own (refused: give it as `keyPrefix`). */
  connection: string | Redis;
  /** Prefix of every key and channel (default `toolstream:`); instances that share tasks share it. */
  keyPrefix?: string;
  /**
   * How long a worker holds a run without renewing its lease (default 10000 ms; renewed every
   * third of it). A worker silent longer is lost: its task ends FAILED and is not run again.
   */
  leaseMs?: number;
  /** Runs waiting in the run queue for a worker, at most (default 10000); past it a send gets 503. */
  maxQueuedRuns?: number;
  /** Runs one process (role all or worker) runs at once (default 32); more wait in the queue. */
  maxConcurrentRuns?: number;
  /**
   * How long a run may wait in the queue for a worker (default: runDeadlineMs). A run no worker
   * took by then ends FAILED, with a status message naming this option, and leaves the queue.
   */
  queueTimeoutMs?: number;
}

export interface A2aAuthOptions {
  /** Accepted in the `X-API-Key` header; each key is its own caller. */
  apiKeys?: string[];
  /** Accepted as `Authorization: Bearer <token>`; each token is its own caller. */
  bearerTokens?: string[];
}

/** Environment variables read when the `auth` option is unset. */
export const AUTH_ENV = { apiKeys: 'TOOLSTREAM_API_KEYS', bearerTokens: 'TOOLSTREAM_BEARER_TOKENS' } as const;
/** A secret shorter than this is refused at boot: it could be guessed. */
export const MIN_SECRET_LENGTH = 16;

export interface A2aModuleExtras {
  /**
   * The module providing AGENT_EXTENSIONS (e.g. `ExtensionsModule.forRoot({...})`);
   * defaults to ExtensionsModule with tool-call-v1 alone.
   */
  extensions?: Type | DynamicModule;
  /**
   * Mounts every A2A route (agent card, JSON-RPC, HTTP+JSON) under this prefix, e.g. `agent`
   * → `/agent/.well-known/agent-card.json`, `/agent/a2a`, `/agent/tasks`; the card's URLs follow.
   * Default: the application's root (after any global prefix).
   */
  path?: string;
  /**
   * What this process does (default `all`): `all` serves A2A and runs agents, `api` serves A2A
   * and runs none (workers elsewhere take its runs from the Redis run queue), `worker` runs
   * agents from the queue and serves no A2A route. `api` and `worker` need the `redis` option.
   */
  role?: ToolstreamRole;
}

/** What a toolstream process does: see A2aModuleExtras.role. */
export type ToolstreamRole = 'all' | 'api' | 'worker';
export const TOOLSTREAM_ROLES: readonly ToolstreamRole[] = ['all', 'api', 'worker'];

/** The role, checked: anything else fails at boot naming `what` (an option or a variable). */
export function checkRole(value: unknown, what: string): ToolstreamRole {
  if (value === undefined) return 'all';
  if (typeof value === 'string' && (TOOLSTREAM_ROLES as readonly string[]).includes(value)) return value as ToolstreamRole;
  throw new Error(`${what} must be one of ${TOOLSTREAM_ROLES.join(', ')}, got ${JSON.stringify(value)}`);
}

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: A2A_MODULE_OPTIONS,
  OPTIONS_TYPE: A2A_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: A2A_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<A2aModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras<A2aModuleExtras>({}, (definition, extras) => {
    const role = checkRole(extras.role, 'A2aModule role');
    return {
      ...definition,
      // A worker serves no A2A route: its HTTP port answers health probes only.
      controllers: role === 'worker' ? [] : A2A_CONTROLLERS,
      providers: [...(definition.providers ?? []), { provide: A2A_ROLE, useValue: role }],
      imports: [...(definition.imports ?? []), extras.extensions ?? ExtensionsModule.forRoot(), ...mountedAt('A2aModule', extras.path, definition.module)],
    };
  })
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
  stalledStreamTimeoutMs: number;
  taskTtlMs: number;
  maxEventsPerTask: number;
  maxFinishedToolsPerTask: number;
  maxLiveTasks: number;
  maxLiveTasksPerCaller: number;
  maxRetainedTasks: number;
  maxRetainedBytes: number;
  runDeadlineMs: number;
  cancelTimeoutMs: number;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  maxJsonDepth: number;
  maxPartsPerMessage: number;
  maxTextLength: number;
  maxHistoryLength: number;
  maxFrameFieldBytes: number;
  /** The accepted credentials; both empty means authentication is off. */
  auth: Required<A2aAuthOptions>;
  drainTimeoutMs: number;
  redis?: A2aRedisOptions;
}

export const A2A_DEFAULTS = {
  keepAliveMs: 15_000,
  stalledStreamTimeoutMs: 60_000,
  disconnectGraceMs: 3_000,
  taskTtlMs: 60 * 60_000,
  maxEventsPerTask: 10_000,
  maxFinishedToolsPerTask: 100,
  maxLiveTasks: 1_000,
  maxLiveTasksPerCaller: 500,
  maxRetainedTasks: 10_000,
  maxRetainedBytes: 256 * 1024 * 1024,
  runDeadlineMs: 30 * 60_000,
  cancelTimeoutMs: 5_000,
  maxBodyBytes: 1024 * 1024,
  bodyTimeoutMs: 10_000,
  maxJsonDepth: 64,
  maxPartsPerMessage: 64,
  maxTextLength: 100_000,
  maxHistoryLength: 100,
  maxFrameFieldBytes: 16 * 1024,
  drainTimeoutMs: 10_000,
} as const;

/** Below this a frame field could not even hold a truncation marker. */
const MIN_FRAME_FIELD_BYTES = 256;

export function resolveA2aConfig(options: A2aModuleOptions = {}, env: NodeJS.ProcessEnv = process.env): A2aConfig {
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
    disconnectGraceMs: wholeNumber(options.disconnectGraceMs, 'disconnectGraceMs') ?? A2A_DEFAULTS.disconnectGraceMs,
    keepAliveMs: positive(options.keepAliveMs, 'keepAliveMs') ?? A2A_DEFAULTS.keepAliveMs,
    stalledStreamTimeoutMs: positive(options.stalledStreamTimeoutMs, 'stalledStreamTimeoutMs') ?? A2A_DEFAULTS.stalledStreamTimeoutMs,
    taskTtlMs: positive(options.taskTtlMs, 'taskTtlMs') ?? A2A_DEFAULTS.taskTtlMs,
    maxEventsPerTask: positive(options.maxEventsPerTask, 'maxEventsPerTask') ?? A2A_DEFAULTS.maxEventsPerTask,
    maxFinishedToolsPerTask: wholeNumber(options.maxFinishedToolsPerTask, 'maxFinishedToolsPerTask') ?? A2A_DEFAULTS.maxFinishedToolsPerTask,
    maxLiveTasks: positive(options.maxLiveTasks, 'maxLiveTasks') ?? A2A_DEFAULTS.maxLiveTasks,
    maxLiveTasksPerCaller: positive(options.maxLiveTasksPerCaller, 'maxLiveTasksPerCaller') ?? A2A_DEFAULTS.maxLiveTasksPerCaller,
    maxRetainedTasks: positive(options.maxRetainedTasks, 'maxRetainedTasks') ?? A2A_DEFAULTS.maxRetainedTasks,
    maxRetainedBytes: positive(options.maxRetainedBytes, 'maxRetainedBytes') ?? A2A_DEFAULTS.maxRetainedBytes,
    runDeadlineMs: positive(options.runDeadlineMs, 'runDeadlineMs') ?? A2A_DEFAULTS.runDeadlineMs,
    cancelTimeoutMs: positive(options.cancelTimeoutMs, 'cancelTimeoutMs') ?? A2A_DEFAULTS.cancelTimeoutMs,
    maxBodyBytes: positive(options.maxBodyBytes, 'maxBodyBytes') ?? A2A_DEFAULTS.maxBodyBytes,
    bodyTimeoutMs: positive(options.bodyTimeoutMs, 'bodyTimeoutMs') ?? A2A_DEFAULTS.bodyTimeoutMs,
    maxJsonDepth: positive(options.maxJsonDepth, 'maxJsonDepth') ?? A2A_DEFAULTS.maxJsonDepth,
    maxPartsPerMessage: positive(options.maxPartsPerMessage, 'maxPartsPerMessage') ?? A2A_DEFAULTS.maxPartsPerMessage,
    maxTextLength: positive(options.maxTextLength, 'maxTextLength') ?? A2A_DEFAULTS.maxTextLength,
    maxHistoryLength: positive(options.maxHistoryLength, 'maxHistoryLength') ?? A2A_DEFAULTS.maxHistoryLength,
    maxFrameFieldBytes: Math.max(positive(options.maxFrameFieldBytes, 'maxFrameFieldBytes') ?? A2A_DEFAULTS.maxFrameFieldBytes, MIN_FRAME_FIELD_BYTES),
    auth: resolveAuth(options.auth, env),
    drainTimeoutMs: positive(options.drainTimeoutMs, 'drainTimeoutMs') ?? A2A_DEFAULTS.drainTimeoutMs,
    redis: resolveRedis(options.redis),
  };
}

/** The credentials from the options, else from the environment; weak or blank secrets fail at boot. */
function resolveAuth(auth: A2aAuthOptions | false | undefined, env: NodeJS.ProcessEnv): Required<A2aAuthOptions> {
  if (auth === false) return { apiKeys: [], bearerTokens: [] };
  const fromEnv = (name: string): string[] => (env[name] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const apiKeys = auth ? (auth.apiKeys ?? []) : fromEnv(AUTH_ENV.apiKeys);
  const bearerTokens = auth ? (auth.bearerTokens ?? []) : fromEnv(AUTH_ENV.bearerTokens);
  for (const [name, secrets] of [['apiKeys', apiKeys], ['bearerTokens', bearerTokens]] as const) {
    secrets.forEach((secret, i) => {
      // The message names the position only: a secret is never echoed, not even a bad one.
      if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH || /[\s,]/.test(secret)) {
        throw new Error(`A2aModule auth.${name}[${i}] must be a string of at least ${MIN_SECRET_LENGTH} characters without spaces or commas`);
      }
    });
  }
  return { apiKeys: [...apiKeys], bearerTokens: [...bearerTokens] };
}

/** A Redis URL must be one: a typo fails at boot, naming the option, never the password. */
function resolveRedis(redis: A2aRedisOptions | undefined): A2aRedisOptions | undefined {
  if (redis === undefined) return undefined;
  if (typeof redis.connection === 'string') checkRedisUrl(redis.connection, 'A2aModule option redis.connection');
  else if (typeof redis.connection?.duplicate !== 'function') throw new Error('A2aModule option redis.connection must be a redis:// or rediss:// URL or an ioredis client');
  // ioredis prefixes the keys of its plain commands, not those the store's Lua scripts are given
  // (sent as written EVALSHA calls): a task's keys would be split between two names.
  else if (redis.connection.options?.keyPrefix) {
    throw new Error(
      `A2aModule option redis.connection: the ioredis client has a keyPrefix of its own (${JSON.stringify(redis.connection.options.keyPrefix)}); give a client without one, and the prefix as redis.keyPrefix`,
    );
  }
  positive(redis.leaseMs, 'redis.leaseMs');
  positive(redis.maxQueuedRuns, 'redis.maxQueuedRuns');
  positive(redis.maxConcurrentRuns, 'redis.maxConcurrentRuns');
  positive(redis.queueTimeoutMs, 'redis.queueTimeoutMs');
  return { ...redis };
}

/** Checks a `redis://` or `rediss://` URL; the error names `what` and shows the URL without its password. */
export function checkRedisUrl(url: string, what: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || !parsed.hostname) {
    const shown = parsed ? `${parsed.protocol}//${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}` : 'a value that is not a URL';
    throw new Error(`${what} must be a redis:// or rediss:// URL with a host (e.g. redis://user:password@host:port), got ${shown}`);
  }
}

const positive = (value: number | undefined, name: string): number | undefined => positiveWholeNumber('A2aModule', name, value);
const wholeNumber = (value: number | undefined, name: string): number | undefined => nonNegative('A2aModule', name, value);

import type { StructuredToolInterface } from '@langchain/core/tools';
import { checkRedisUrl, checkRole, type A2aModuleOptions, type ToolstreamRole } from './a2a';
import { PlannerChatModel } from './demo/planner/planner-chat-model';
import { createDemoTools } from './demo/tools/demo-tools';
import type { ExecutorModuleOptions } from './executor';
import { chatModelFromEnv } from './executor/models/chat-model-from-env';
import type { MetricsModuleOptions } from './metrics';

/** The demo app's settings from the environment, read at boot; a bad value fails it, naming the variable. */
export const DEMO_ENV = {
  runTimeoutMs: 'TOOLSTREAM_RUN_TIMEOUT_MS',
  toolTimeoutMs: 'TOOLSTREAM_TOOL_TIMEOUT_MS',
  drainTimeoutMs: 'TOOLSTREAM_DRAIN_TIMEOUT_MS',
  maxBodyBytes: 'TOOLSTREAM_MAX_BODY_BYTES',
  publicUrl: 'A2A_PUBLIC_URL',
  metricsPath: 'TOOLSTREAM_METRICS_PATH',
  metricsPort: 'TOOLSTREAM_METRICS_PORT',
  redisUrl: 'TOOLSTREAM_REDIS_URL',
  role: 'TOOLSTREAM_ROLE',
  runLeaseMs: 'TOOLSTREAM_RUN_LEASE_MS',
  maxLiveTasks: 'TOOLSTREAM_MAX_LIVE_TASKS',
  maxLiveTasksPerCaller: 'TOOLSTREAM_MAX_LIVE_TASKS_PER_CALLER',
  offlinePieceDelayMs: 'TOOLSTREAM_OFFLINE_PIECE_DELAY_MS',
  remoteAgents: 'TOOLSTREAM_REMOTE_AGENTS',
} as const;

/** A run that takes longer than this is a hung model or a runaway loop, not a slow answer. */
export const DEMO_RUN_TIMEOUT_MS = 120_000;
/** The slowest demo tool takes at most 10 s; a tool past this is stuck. */
export const DEMO_TOOL_TIMEOUT_MS = 30_000;

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback?: number): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(raw)}`);
  return value;
}

function nonNegativeInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value)) throw new Error(`${name} must be a whole number (0 or more), got ${JSON.stringify(raw)}`);
  return value;
}

/** `remoteTools`: one tool per remote agent (see demo/remote-agents.ts), after the demo tools. */
/** The port to listen on: PORT, a whole number from 0 (any free port) to 65535; 3000 when unset. */
export function portFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PORT?.trim();
  if (!raw) return 3000;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new Error(`PORT must be a whole number from 0 to 65535, got ${JSON.stringify(raw)}`);
  return port;
}

export function executorOptionsFromEnv(env: NodeJS.ProcessEnv = process.env, remoteTools: StructuredToolInterface[] = []): ExecutorModuleOptions {
  return {
    // The demo tools, and the planner (which also reads plain English about them) when no OpenAI-compatible endpoint is set.
    tools: [...createDemoTools(), ...remoteTools],
    // The offline planner streams its answer in pieces paced like a hosted model; tests that send
    // thousands of requests set the pause to 0.
    model: chatModelFromEnv(env, () => new PlannerChatModel({ pieceDelayMs: nonNegativeInteger(env, DEMO_ENV.offlinePieceDelayMs) })),
    runTimeoutMs: positiveInteger(env, DEMO_ENV.runTimeoutMs, DEMO_RUN_TIMEOUT_MS),
    toolTimeoutMs: positiveInteger(env, DEMO_ENV.toolTimeoutMs, DEMO_TOOL_TIMEOUT_MS),
  };
}

/** Credentials come from TOOLSTREAM_API_KEYS / TOOLSTREAM_BEARER_TOKENS, read by A2aModule itself. */
export function a2aOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): A2aModuleOptions {
  return {
    // Behind a proxy, the URL clients reach (otherwise the card follows each request's Host).
    publicUrl: env[DEMO_ENV.publicUrl] || undefined,
    drainTimeoutMs: positiveInteger(env, DEMO_ENV.drainTimeoutMs),
    maxBodyBytes: positiveInteger(env, DEMO_ENV.maxBodyBytes),
    // With Redis, across every instance on it.
    maxLiveTasks: positiveInteger(env, DEMO_ENV.maxLiveTasks),
    maxLiveTasksPerCaller: positiveInteger(env, DEMO_ENV.maxLiveTasksPerCaller),
    redis: redisFromEnv(env),
  };
}

/** `TOOLSTREAM_METRICS_PATH`: the path (default /metrics) or `off`; `TOOLSTREAM_METRICS_PORT`: a port of its own. */
export function metricsOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): MetricsModuleOptions {
  const path = env[DEMO_ENV.metricsPath]?.trim();
  const portText = env[DEMO_ENV.metricsPort]?.trim();
  let port: number | undefined;
  if (portText) {
    port = Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${DEMO_ENV.metricsPort} must be a port number (0 to 65535), got ${JSON.stringify(portText)}`);
  }
  return { path: path === 'off' ? false : path || undefined, port };
}

/** TOOLSTREAM_REDIS_URL: tasks shared through Redis (redis:// or rediss://, a password in the URL); unset: in memory. */
function redisFromEnv(env: NodeJS.ProcessEnv): A2aModuleOptions['redis'] {
  const url = env[DEMO_ENV.redisUrl]?.trim();
  if (!url) return undefined;
  checkRedisUrl(url, DEMO_ENV.redisUrl);
  return { connection: url, leaseMs: positiveInteger(env, DEMO_ENV.runLeaseMs) };
}

/**
 * TOOLSTREAM_ROLE: `all` (default: serves A2A and runs agents), `api` (serves A2A, runs none) or
 * `worker` (runs agents, serves /healthz only); `api` and `worker` need TOOLSTREAM_REDIS_URL.
 */
export function roleFromEnv(env: NodeJS.ProcessEnv = process.env): ToolstreamRole {
  const raw = env[DEMO_ENV.role]?.trim();
  const role = checkRole(raw || undefined, DEMO_ENV.role);
  if (role !== 'all' && !env[DEMO_ENV.redisUrl]?.trim()) {
    throw new Error(`${DEMO_ENV.role}=${role} needs ${DEMO_ENV.redisUrl}: api and worker processes share their tasks and runs through Redis`);
  }
  return role;
}

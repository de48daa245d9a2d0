/**
 * `toolstream`: the Nest modules and what a host needs to configure and extend them. The
 * tool-call-v1 contract is `toolstream/extensions`, the browser kit `toolstream/client`, test
 * doubles `toolstream/testing`. Every name here is listed in public-api.spec.ts.
 */

// Modules
export { ExtensionsModule, type ExtensionsModuleOptions } from './extensions/extensions.module';
export { ExecutorModule } from './executor/executor.module';
export { RuntimeModule } from './runtime/runtime.module';
export { A2aModule } from './a2a/a2a.module';
export { A2A_ROUTE, isA2aRoute } from './a2a/a2a-route';
export { HealthModule } from './health/health.module';
export { WebModule } from './web/web.module';

// Options
export type { ExecutorModuleOptions } from './executor/executor-module-options';
export type { RuntimeModuleOptions, RuntimeModuleExtras } from './runtime/runtime.module-definition';
export type {
  A2aModuleOptions,
  A2aModuleExtras,
  A2aAgentCardOptions,
  A2aSkillOptions,
  A2aAuthOptions,
  ToolstreamRole,
} from './a2a/a2a.module-definition';
export type { WebModuleOptions, WebModuleExtras } from './web/web.module-definition';
export type { NarrationOptions, NarrationPhrase } from './runtime/narration';
export type { FrameHygieneOptions } from './executor/frames/sanitize-for-frame';

// Injection tokens and the services behind them
export { AGENT_EXTENSIONS } from './extensions/extensions.constants';
export { EXECUTOR_AGENT, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS } from './executor/executor.constants';
export { AgentExecutor, type ExecutorEvent, type ExecutorInput, type ExecutorRunOptions, type TurnToolCall } from './executor/executor.types';
export { DeepAgentExecutor } from './executor/deep-agent-executor.service';
export { AgentBus } from './runtime/agent-bus';
export { AgentRuntimeService } from './runtime/agent-runtime.service';
export type { ChatTurn, SkillRequest, SkillCancel, ReplyPayload, TaskTopicKind, TaskTopicPayloads } from './runtime/runtime.topics';
export { TaskService } from './a2a/task.service';
export { AgentCardService } from './a2a/agent-card.service';
export { ExpressPrototypesAdapter } from './a2a/express-prototypes.adapter';

// Building agents
export type { MessagesAgent } from './executor/agent/messages-agent';
export { createToolAgent, type ToolAgentOptions } from './executor/agent/tool-agent';
export { withJsonSafeResult, withKnownArguments, withToolTimeout, ToolTimeoutError } from './executor/agent/tool-guards';
export { chatModelFromEnv, DEFAULT_OPENAI_MODEL } from './executor/models/chat-model-from-env';
export { OfflineToolModel, type OfflineToolModelOptions } from './executor/models/offline-tool-model';

// Observability: metrics, health contributions, trace context
export { MetricsModule } from './metrics/metrics.module';
export type { MetricsModuleOptions } from './metrics/interfaces/metrics-module-options.interface';
export { ToolstreamMetrics } from './metrics/toolstream-metrics.service';
export { MetricsServer } from './metrics/metrics-server';
export { ContributesHealth, type HealthContributor, type HealthProbe } from './health/health-contributor';
export { withToolSpan } from './executor/agent/tool-spans';
export { injectTraceHeaders, type TraceCarrier } from './tracing/trace-context';

// Remote A2A agents as tools
export * from './remote-agents';

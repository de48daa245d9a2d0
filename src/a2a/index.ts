export { A2aModule } from './a2a.module';
export { A2A_ROUTE, isA2aRoute } from './a2a-route';
export {
  A2A_MODULE_OPTIONS,
  A2A_DEFAULTS,
  resolveA2aConfig,
  type A2aModuleOptions,
  type A2aModuleExtras,
  type A2aAgentCardOptions,
  type A2aSkillOptions,
  type A2aConfig,
  type A2aAuthOptions,
  type A2aRedisOptions,
  checkRedisUrl,
  checkRole,
  TOOLSTREAM_ROLES,
  type ToolstreamRole,
  AUTH_ENV,
} from './a2a.module-definition';
export { A2aAuthService, API_KEY_HEADER } from './auth/a2a-auth.service';
export { SecretScrubber } from './auth/secret-scrubber';
export { ExpressPrototypesAdapter } from './express-prototypes.adapter';
export { applyHttpTimeouts, HTTP_TIMEOUT_DEFAULTS, type HttpTimeoutOptions, type HttpTimeoutTarget } from './limits/http-timeouts';
export { A2aDrainService, type DrainReport } from './shutdown/a2a-drain.service';
export { A2A_CONFIG, JSON_RPC_PATH, AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSIONS, type ProtocolVersion } from './a2a.constants';
export { TaskService, type A2aMetrics } from './task.service';
export {
  TaskStore,
  type TaskView,
  type TaskWriter,
  type WrittenTask,
  type NewTask,
  type ListTasksQuery,
  type TaskPage,
  type Conversation,
} from './store/task-store';
export { InMemoryTaskStore, type InMemoryTaskStoreOptions } from './store/in-memory-task-store';
export { RedisTaskStore, type RedisTaskStoreOptions } from './store/redis-task-store';
export { AgentCardService } from './agent-card.service';
export type { CallerId } from './task-record';

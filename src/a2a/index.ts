export { A2aModule } from './a2a.module';
export {
  A2A_MODULE_OPTIONS,
  A2A_DEFAULTS,
  resolveA2aConfig,
  type A2aModuleOptions,
  type A2aModuleExtras,
  type A2aAgentCardOptions,
  type A2aSkillOptions,
  type A2aConfig,
} from './a2a.module-definition';
export { A2A_CONFIG, JSON_RPC_PATH, AGENT_CARD_WELL_KNOWN_PATH, PROTOCOL_VERSIONS, type ProtocolVersion } from './a2a.constants';
export { TaskService, type A2aMetrics } from './task.service';
export { AgentCardService } from './agent-card.service';
export type { CallerId } from './task-record';

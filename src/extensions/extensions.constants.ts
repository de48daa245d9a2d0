/** DI token: the AgentExtension entries the agent card declares (tool-call-v1 first). */
export const AGENT_EXTENSIONS = Symbol('AGENT_EXTENSIONS');

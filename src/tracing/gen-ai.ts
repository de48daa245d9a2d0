/**
 * Span names and attribute keys of the OpenTelemetry GenAI semantic conventions that toolstream
 * emits, plus the A2A ones it adds. Kept as plain strings: the conventions are still in
 * development, and @opentelemetry/semantic-conventions exports them only from its incubating entry.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  errorType: 'error.type',
} as const;

/** The A2A task a span belongs to (the task id is also the bus correlation id). */
export const A2A_TASK_ID = 'a2a.task.id';
/** The terminal A2A state of a task span (TASK_STATE_COMPLETED, …). */
export const A2A_TASK_STATE = 'a2a.task.state';

export const GEN_AI_OPERATION = {
  invokeAgent: 'invoke_agent',
  executeTool: 'execute_tool',
  chat: 'chat',
} as const;

/** `invoke_agent <agent name>` */
export const invokeAgentSpanName = (agentName: string): string => `${GEN_AI_OPERATION.invokeAgent} ${agentName}`;
/** `execute_tool <tool name>` */
export const executeToolSpanName = (toolName: string): string => `${GEN_AI_OPERATION.executeTool} ${toolName}`;
/** `chat <model>` */
export const chatSpanName = (model: string): string => `${GEN_AI_OPERATION.chat} ${model}`;

/** DI token: the chat model of the default agent (the offline planner unless configured). */
export const EXECUTOR_CHAT_MODEL = Symbol('EXECUTOR_CHAT_MODEL');
/** DI token: the tools of the default agent (the six demo tools unless configured). */
export const EXECUTOR_TOOLS = Symbol('EXECUTOR_TOOLS');
/** DI token: the compiled LangGraph agent the executor streams (a MessagesAgent). */
export const EXECUTOR_AGENT = Symbol('EXECUTOR_AGENT');

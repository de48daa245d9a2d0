import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { InvalidToolCall, ToolCall } from '@langchain/core/messages/tool';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import type { MessagesAgent } from './messages-agent';
import { withJsonSafeResult, withKnownArguments, withToolTimeout } from './tool-guards';
import { describeModel, inModelSpan, withToolSpan } from './tool-spans';

export interface ToolAgentOptions {
  /** Each tool call fails with "timed out after N ms" past this; unbounded when unset. */
  toolTimeoutMs?: number;
}

/**
 * Each parallel tool call (and LangChain's wrapper around it) listens on the step's abort
 * signal; a turn with many calls is not a leak, so Node's warning past 10 listeners is lifted.
 */
const TOOL_SIGNAL_MAX_LISTENERS = 1000;

class ParallelToolNode extends ToolNode {
  protected override run(...args: Parameters<ToolNode['run']>) {
    const signal = args[1].signal;
    if (signal) setMaxListeners(TOOL_SIGNAL_MAX_LISTENERS, signal);
    return super.run(...args);
  }
}

export const newToolCallId = (): string => `call_${randomUUID()}`;

/**
 * A streamed call the model sent without an id lands in `invalid_tool_calls` (LangChain cannot
 * assemble a call without one); when its arguments parse, it is a call all the same, and moves
 * back to `tool_calls` (without an id, which assignToolCallIds then gives it).
 */
export function recoverCallsWithoutIds<M extends { tool_calls?: ToolCall[]; invalid_tool_calls?: InvalidToolCall[] }>(message: M): M {
  const invalid = message.invalid_tool_calls ?? [];
  if (!invalid.some((call) => !call.id)) return message;
  const recovered: ToolCall[] = [];
  const still = invalid.filter((call) => {
    if (call.id || !call.name) return true;
    const args = parseArgs(call.args);
    if (args === undefined) return true;
    recovered.push({ name: call.name, args, id: undefined, type: 'tool_call' });
    return false;
  });
  if (recovered.length === 0) return message;
  message.tool_calls = [...(message.tool_calls ?? []), ...recovered];
  message.invalid_tool_calls = still;
  return message;
}

function parseArgs(args: string | undefined): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(args?.trim() || '{}');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The ids of every tool call the messages hold (what a new call must not reuse). */
export function toolCallIdsIn(messages: readonly BaseMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) {
    if (AIMessage.isInstance(m)) for (const call of m.tool_calls ?? []) if (call.id) ids.add(call.id);
  }
  return ids;
}

/**
 * Gives every tool call of a model reply a usable id: a missing or empty id, or one already
 * used in the same reply or earlier in the run (`earlier`), is replaced. Done on the AI message
 * before the tools run, so the ToolMessages and the `tools` stream carry the same id and every
 * frame pairs with its start.
 */
export function assignToolCallIds<M extends { tool_calls?: ToolCall[] }>(
  message: M,
  newId: () => string = newToolCallId,
  earlier: ReadonlySet<string> = new Set(),
): M {
  if (!message.tool_calls?.length) return message;
  const used = new Set<string>(earlier);
  let changed = false;
  const calls = message.tool_calls.map((call) => {
    if (call.id && !used.has(call.id)) {
      used.add(call.id);
      return call;
    }
    changed = true;
    const id = newId();
    used.add(id);
    return { ...call, id };
  });
  if (changed) message.tool_calls = calls;
  return message;
}

/**
 * The default agent: a ReAct loop built from LangGraph's own parts (StateGraph over
 * MessagesAnnotation, ToolNode, toolsCondition): the model turn, then the requested tools in
 * parallel, until the model answers without tool calls. Each model call and each tool call is
 * an OpenTelemetry span (see tool-spans.ts).
 */
export function createToolAgent(model: BaseChatModel, tools: StructuredToolInterface[], options: ToolAgentOptions = {}): MessagesAgent {
  if (typeof model.bindTools !== 'function') {
    throw new Error(`ExecutorModule: the chat model ${model.getName()} does not support bindTools(), so it cannot call tools`);
  }
  const bound = model.bindTools(tools);
  const toolTimeoutMs = options.toolTimeoutMs;
  const runnableTools = tools.map((t) =>
    withToolSpan(withKnownArguments(withJsonSafeResult(toolTimeoutMs === undefined ? t : withToolTimeout(t, toolTimeoutMs)))),
  );
  const described = describeModel(model);

  const callModel = async (state: typeof MessagesAnnotation.State, config: RunnableConfig) => {
    const reply = await inModelSpan(described, () => bound.invoke(state.messages, config));
    // Servers that reuse one completion id would make the messages reducer overwrite the
    // earlier turn that has it; each turn must stay its own message.
    if (reply.id !== undefined && state.messages.some((m) => m.id === reply.id)) reply._updateId(`${reply.id}-${randomUUID()}`);
    // Some servers number calls per reply (call_0 in every turn): ids must be unique in the run.
    return { messages: [assignToolCallIds(recoverCallsWithoutIds(reply), newToolCallId, toolCallIdsIn(state.messages))] };
  };

  const agent = new StateGraph(MessagesAnnotation)
    .addNode('agent', callModel)
    .addNode('tools', new ParallelToolNode(runnableTools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ name: 'toolstream-agent' });
  selfTraced.add(agent);
  return agent;
}

/** Agents built by createToolAgent: each tool and model call already runs in its own span. */
const selfTraced = new WeakSet<object>();

/** Whether the agent opens its tool and model calls' spans itself (only createToolAgent's do). */
export function tracesItsToolCalls(agent: MessagesAgent): boolean {
  return selfTraced.has(agent);
}

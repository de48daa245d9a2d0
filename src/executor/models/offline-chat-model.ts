/**
 * Shared base of the offline chat models (the demo planner and the scripted test model):
 * real LangChain chat models, so they go through bindTools, callbacks and abort signals
 * exactly like a hosted model does.
 */
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { toolErrorText, toolResultValue } from '../frames/tool-output';

export interface OfflineChatModelCallOptions extends BaseChatModelCallOptions {
  /** The tools bound with bindTools. */
  tools?: BindToolsInput[];
}

/** What one tool call of the current request came back with. */
export interface ToolOutcome {
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
  ok: boolean;
  /** The result (JSON content read back into data) when ok. */
  value?: unknown;
  /** The tool's own error message when not ok. */
  error?: string;
}

/** The current request: the last user message and what happened after it. */
export interface CurrentTurn {
  /** Text of the last human message ("" if there is none). */
  request: string;
  /** AI messages since that request (0 on the first model turn). */
  modelTurns: number;
  /** Tool results since that request, in the order they arrived. */
  outcomes: ToolOutcome[];
}

export function readCurrentTurn(messages: readonly BaseMessage[]): CurrentTurn {
  let start = messages.length - 1;
  while (start >= 0 && !HumanMessage.isInstance(messages[start])) start--;
  const request = start >= 0 ? messages[start].text : '';
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const outcomes: ToolOutcome[] = [];
  let modelTurns = 0;
  for (const message of messages.slice(start + 1)) {
    if (AIMessage.isInstance(message)) {
      modelTurns++;
      for (const call of message.tool_calls ?? []) calls.set(call.id ?? '', { name: call.name, args: call.args });
    } else if (ToolMessage.isInstance(message)) {
      const call = calls.get(message.tool_call_id);
      const ok = message.status !== 'error';
      outcomes.push({
        toolCallId: message.tool_call_id,
        name: call?.name ?? message.name ?? 'tool',
        args: call?.args ?? {},
        ok,
        ...(ok ? { value: toolResultValue(message) } : { error: toolErrorText(message.content) }),
      });
    }
  }
  return { request, modelTurns, outcomes };
}

export abstract class OfflineChatModel extends BaseChatModel<OfflineChatModelCallOptions> {
  override bindTools(tools: BindToolsInput[], kwargs?: Partial<OfflineChatModelCallOptions>) {
    return this.withConfig({ ...kwargs, tools });
  }

  /** Names of the tools bound to this call. */
  protected boundToolNames(options: this['ParsedCallOptions']): Set<string> {
    return new Set((options.tools ?? []).map((t) => convertToOpenAITool(t).function.name));
  }

  protected result(message: AIMessage): ChatResult {
    return { generations: [{ text: message.text, message }] };
  }
}

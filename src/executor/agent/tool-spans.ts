/**
 * Spans of the default agent's tool and model calls (OpenTelemetry GenAI conventions). They
 * start in the active context, so they nest under the run's `invoke_agent` span, and a tool's
 * body runs inside its own `execute_tool` span: whatever it calls (another agent over A2A, an
 * HTTP API with instrumentation) continues the same trace. Without an SDK they are no-ops.
 */
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { BaseMessage, type AIMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { SpanKind, SpanStatusCode, context, trace, type Span } from '@opentelemetry/api';
import {
  A2A_TASK_ID,
  GEN_AI,
  GEN_AI_OPERATION,
  activeTaskId,
  chatSpanName,
  executeToolSpanName,
  toolstreamTracer,
} from '../../tracing';
import { errorMessage, toolErrorText } from '../frames/tool-output';

/** LangGraph pauses a graph by throwing these; the tool did not fail. */
const INTERRUPTS = new Set(['GraphInterrupt', 'NodeInterrupt']);

function endWithError(span: Span, message: string, type: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute(GEN_AI.errorType, type);
  span.end();
}

function toolCallId(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const call = input as { type?: unknown; id?: unknown };
  return call.type === 'tool_call' && typeof call.id === 'string' ? call.id : undefined;
}

type Invoke = (input: unknown, config?: unknown) => Promise<unknown>;

/**
 * The same tool, each call in an `execute_tool <name>` span: `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, the A2A task id; error status with the tool's message when it throws
 * or answers with an error ToolMessage. A new object, prototype-linked to the tool.
 */
export function withToolSpan<T extends StructuredToolInterface>(tool: T): T {
  const traced = Object.create(tool) as T;
  const invoke = tool.invoke as unknown as Invoke;
  const name = tool.name;
  const spanName = executeToolSpanName(name);
  (traced as unknown as { invoke: Invoke }).invoke = function (this: T, input, config) {
    const parent = context.active();
    const span = toolstreamTracer().startSpan(spanName, { kind: SpanKind.INTERNAL }, parent);
    if (span.isRecording()) {
      span.setAttribute(GEN_AI.operationName, GEN_AI_OPERATION.executeTool);
      span.setAttribute(GEN_AI.toolName, name);
      span.setAttribute(GEN_AI.toolType, 'function');
      const id = toolCallId(input);
      if (id !== undefined) span.setAttribute(GEN_AI.toolCallId, id);
      const taskId = activeTaskId(parent);
      if (taskId !== undefined) span.setAttribute(A2A_TASK_ID, taskId);
    }
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(context.with(trace.setSpan(parent, span), () => invoke.call(this, input, config)));
    } catch (err) {
      result = Promise.reject(err);
    }
    return result.then(
      (output) => {
        if (BaseMessage.isInstance(output) && (output as { status?: unknown }).status === 'error') {
          endWithError(span, toolErrorText(output.content), 'tool_error');
        } else {
          span.end();
        }
        return output;
      },
      (err: unknown) => {
        const type = err instanceof Error ? err.name : 'Error';
        if (INTERRUPTS.has(type)) span.end();
        else {
          if (err instanceof Error) span.recordException(err);
          endWithError(span, errorMessage(err), type);
        }
        throw err;
      },
    );
  };
  return traced;
}

/** What the spans say about a chat model: its provider and the model it asks for. */
export function describeModel(model: BaseChatModel): { provider: string; model: string } {
  const fields = model as unknown as { model?: unknown; modelName?: unknown };
  const requested = typeof fields.model === 'string' ? fields.model : typeof fields.modelName === 'string' ? fields.modelName : model.getName();
  let provider: string;
  try {
    provider = model._llmType();
  } catch {
    provider = model.getName();
  }
  return { provider, model: requested };
}

/** One model call in a `chat <model>` span, with the token usage the reply reports. */
export async function inModelSpan(described: { provider: string; model: string }, call: () => Promise<AIMessage>): Promise<AIMessage> {
  const parent = context.active();
  const span = toolstreamTracer().startSpan(chatSpanName(described.model), { kind: SpanKind.CLIENT }, parent);
  if (span.isRecording()) {
    span.setAttribute(GEN_AI.operationName, GEN_AI_OPERATION.chat);
    span.setAttribute(GEN_AI.providerName, described.provider);
    span.setAttribute(GEN_AI.requestModel, described.model);
    const taskId = activeTaskId(parent);
    if (taskId !== undefined) span.setAttribute(A2A_TASK_ID, taskId);
  }
  try {
    const reply = await context.with(trace.setSpan(parent, span), call);
    if (span.isRecording()) {
      const usage = reply.usage_metadata;
      if (usage) {
        span.setAttribute(GEN_AI.inputTokens, usage.input_tokens);
        span.setAttribute(GEN_AI.outputTokens, usage.output_tokens);
      }
      const responseModel = (reply.response_metadata as { model_name?: unknown } | undefined)?.model_name;
      if (typeof responseModel === 'string') span.setAttribute(GEN_AI.responseModel, responseModel);
    }
    span.end();
    return reply;
  } catch (err) {
    if (err instanceof Error) span.recordException(err);
    endWithError(span, errorMessage(err), err instanceof Error ? err.name : 'Error');
    throw err;
  }
}

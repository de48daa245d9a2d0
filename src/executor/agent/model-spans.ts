/**
 * `chat <model>` spans for agents that do not make their own (any LangGraph agent other than
 * createToolAgent's): a LangChain callback handler in the run's config sees every chat model
 * call of the graph, whatever node makes it. Spans go under the run's context (the task's
 * `invoke_agent` span), with the model and provider LangChain reports and the token usage.
 */
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatGeneration, LLMResult } from '@langchain/core/outputs';
import type { Serialized } from '@langchain/core/load/serializable';
import { SpanKind, SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import { A2A_TASK_ID, GEN_AI, GEN_AI_OPERATION, chatSpanName, toolstreamTracer } from '../../tracing';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export class ModelSpansHandler extends BaseCallbackHandler {
  readonly name = 'toolstream-model-spans';
  /** Spans start and end when the calls do, not when a background queue gets to them. */
  override awaitHandlers = true;
  private readonly open = new Map<string, Span>();

  constructor(
    private readonly parent: Context,
    private readonly taskId: string,
  ) {
    super();
  }

  override handleChatModelStart(
    llm: Serialized,
    _messages: BaseMessage[][],
    runId: string,
    _parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    const invocation = (extraParams?.invocation_params ?? {}) as { model?: unknown; model_name?: unknown };
    const className = llm.id?.at(-1);
    const model = text(metadata?.ls_model_name) ?? text(invocation.model) ?? text(invocation.model_name) ?? className ?? 'model';
    const span = toolstreamTracer().startSpan(chatSpanName(model), { kind: SpanKind.CLIENT }, this.parent);
    if (!span.isRecording()) return;
    span.setAttribute(GEN_AI.operationName, GEN_AI_OPERATION.chat);
    span.setAttribute(GEN_AI.providerName, text(metadata?.ls_provider) ?? className ?? 'unknown');
    span.setAttribute(GEN_AI.requestModel, model);
    span.setAttribute(A2A_TASK_ID, this.taskId);
    this.open.set(runId, span);
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const span = this.take(runId);
    if (!span) return;
    const message = (output.generations[0]?.[0] as ChatGeneration | undefined)?.message as { usage_metadata?: { input_tokens: number; output_tokens: number }; response_metadata?: { model_name?: unknown } } | undefined;
    if (message?.usage_metadata) {
      span.setAttribute(GEN_AI.inputTokens, message.usage_metadata.input_tokens);
      span.setAttribute(GEN_AI.outputTokens, message.usage_metadata.output_tokens);
    }
    const responseModel = text(message?.response_metadata?.model_name);
    if (responseModel) span.setAttribute(GEN_AI.responseModel, responseModel);
    span.end();
  }

  override handleLLMError(err: unknown, runId: string): void {
    const span = this.take(runId);
    if (!span) return;
    if (err instanceof Error) span.recordException(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    span.setAttribute(GEN_AI.errorType, err instanceof Error ? err.name : 'Error');
    span.end();
  }

  private take(runId: string): Span | undefined {
    const span = this.open.get(runId);
    this.open.delete(runId);
    return span;
  }
}

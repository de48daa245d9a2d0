/**
 * `execute_tool` spans made from a run's tool-call-v1 frames, for executors that do not trace
 * their tool calls themselves (a custom LangGraph agent, a backend's own AgentExecutor): every
 * run's frames pass through the runtime, so every agent gets them. The span starts at the
 * `started` frame and ends at `completed` or `failed` (error status with the frame's error),
 * under the run's context (the task's `invoke_agent` span). Frames forwarded from another agent
 * (`parentToolCallId`) are that agent's calls: it traces them in its own process.
 */
import { SpanKind, SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import type { ToolCallArtifactData } from '../extensions';
import { A2A_TASK_ID, GEN_AI, GEN_AI_OPERATION, executeToolSpanName, toolstreamTracer } from '../tracing';

/** The span of a tool call whose `started` frame was seen. */
export function startToolSpan(parent: Context, frame: ToolCallArtifactData, taskId: string): Span | undefined {
  if (frame.parentToolCallId !== undefined) return undefined;
  // Attributes given at the start: the SDK takes them in one pass (and samplers see them).
  const span = toolstreamTracer().startSpan(
    executeToolSpanName(frame.name),
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
        [GEN_AI.toolName]: frame.name,
        [GEN_AI.toolType]: 'function',
        [GEN_AI.toolCallId]: frame.toolCallId,
        [A2A_TASK_ID]: taskId,
      },
    },
    parent,
  );
  return span.isRecording() ? span : undefined;
}

/** Ends it at the call's terminal frame: `failed` (or a run that ended first) gives error status with the reason. */
export function endToolSpan(span: Span, outcome: { failed: false } | { failed: true; error: string }): void {
  if (outcome.failed) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
    span.setAttribute(GEN_AI.errorType, 'tool_error');
  }
  span.end();
}

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
import { GEN_AI, executeToolSpanName, toolstreamTracer, type A2A_TASK_ID } from '../tracing';

/** Span names already built, per tool name: one string per tool, not one per call. Bounded, as frames name any tool. */
const spanNames = new Map<string, string>();
const MAX_CACHED_SPAN_NAMES = 256;

function spanName(toolName: string): string {
  let name = spanNames.get(toolName);
  if (name === undefined) {
    name = executeToolSpanName(toolName);
    if (spanNames.size < MAX_CACHED_SPAN_NAMES) spanNames.set(toolName, name);
  }
  return name;
}

/** The span of a tool call whose `started` frame was seen. */
export function startToolSpan(parent: Context, frame: ToolCallArtifactData, taskId: string): Span | undefined {
  if (frame.parentToolCallId !== undefined) return undefined;
  // Attributes given at the start: the SDK takes them in one pass (and samplers see them). The
  // keys are literals (the GEN_AI / A2A_TASK_ID constants' values, checked in
  // src/tracing/tracing.spec.ts), so every call builds an object of one fixed shape.
  const span = toolstreamTracer().startSpan(
    spanName(frame.name),
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': frame.name,
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.id': frame.toolCallId,
        'a2a.task.id': taskId,
      } satisfies Record<(typeof GEN_AI)['operationName' | 'toolName' | 'toolType' | 'toolCallId'] | typeof A2A_TASK_ID, string>,
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

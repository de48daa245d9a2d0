/**
 * Reads a remote agent's stream (SDK `StreamResponse`s, whichever protocol version it spoke):
 * its tool-call-v1 frames and narration go to the caller as they come, its answer is gathered,
 * and its end says how the delegated task finished.
 */
import { TaskState, type Artifact, type Message, type Part, type StreamResponse, type TaskStatus } from '@a2a-js/sdk';
import { parseToolCalls, type ToolCallArtifactData } from '../extensions';

export type RemoteOutcome =
  | { kind: 'answered'; text: string }
  | { kind: 'failed'; state: 'failed' | 'canceled' | 'rejected' | 'auth-required'; text?: string };

export interface RemoteTaskSink {
  frame(frame: ToolCallArtifactData): void;
  narration(text: string): void;
}

const TERMINAL: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

function textOf(parts: readonly Part[] | undefined): string | undefined {
  const texts = (parts ?? []).flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []));
  return texts.length > 0 ? texts.join('') : undefined;
}

const messageText = (message: Message | undefined): string | undefined => textOf(message?.parts);

export class RemoteTaskReader {
  /** The remote task's id, once its first event named it. */
  taskId: string | undefined;
  /** The last state the remote reported. */
  state: TaskState = TaskState.TASK_STATE_UNSPECIFIED;
  private outcome: RemoteOutcome | undefined;
  /** Answer text per artifact id, in first-seen order. */
  private readonly answer = new Map<string, string>();

  constructor(private readonly sink: RemoteTaskSink) {}

  /** How the task ended, once it did. */
  get result(): RemoteOutcome | undefined {
    return this.outcome;
  }

  read(event: StreamResponse): void {
    if (this.outcome) return;
    const payload = event.payload;
    switch (payload?.$case) {
      case 'task': {
        const task = payload.value;
        this.taskId ||= task.id || undefined;
        for (const artifact of task.artifacts) this.artifact(artifact, false);
        if (task.status) this.status(task.status);
        return;
      }
      case 'statusUpdate':
        this.taskId ||= payload.value.taskId || undefined;
        if (payload.value.status) this.status(payload.value.status);
        return;
      case 'artifactUpdate':
        this.taskId ||= payload.value.taskId || undefined;
        if (payload.value.artifact) this.artifact(payload.value.artifact, payload.value.append);
        return;
      case 'message':
        // A direct reply, without a task.
        this.outcome = { kind: 'answered', text: messageText(payload.value) ?? '' };
        return;
    }
  }

  private artifact(artifact: Artifact, append: boolean): void {
    const frames = parseToolCalls(artifact.parts);
    if (frames.length > 0) {
      for (const frame of frames) this.sink.frame(frame);
      return;
    }
    const text = textOf(artifact.parts);
    if (text === undefined) return;
    const before = this.answer.get(artifact.artifactId);
    this.answer.set(artifact.artifactId, append && before !== undefined ? before + text : text);
  }

  private status(status: TaskStatus): void {
    this.state = status.state;
    const text = messageText(status.message);
    if (!TERMINAL.has(status.state)) {
      if (text) this.sink.narration(text);
      return;
    }
    switch (status.state) {
      case TaskState.TASK_STATE_COMPLETED: {
        const answer = [...this.answer.values()].filter((t) => t.length > 0).join('\n\n');
        this.outcome = { kind: 'answered', text: answer || text || '' };
        return;
      }
      case TaskState.TASK_STATE_INPUT_REQUIRED:
        // The remote asks a question back: that question is what it answered.
        this.outcome = { kind: 'answered', text: text ?? 'the agent asks for more input' };
        return;
      case TaskState.TASK_STATE_FAILED:
        this.outcome = { kind: 'failed', state: 'failed', text };
        return;
      case TaskState.TASK_STATE_CANCELED:
        this.outcome = { kind: 'failed', state: 'canceled', text };
        return;
      case TaskState.TASK_STATE_REJECTED:
        this.outcome = { kind: 'failed', state: 'rejected', text };
        return;
      default:
        this.outcome = { kind: 'failed', state: 'auth-required', text };
    }
  }
}

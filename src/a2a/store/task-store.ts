import type { Message, Task, TaskState } from '@a2a-js/sdk';
import type { ChatTurn } from '../../runtime';
import type { ToolCallArtifactData } from '../../extensions';
import type { CallerId, SnapshotOptions, TaskListener } from '../task-record';

/**
 * A task as every reader sees it, on whichever instance: its state, a bounded snapshot, and its
 * ordered events (sequence numbers from 1, the SSE `id:`) from any retained number on.
 */
export interface TaskView {
  readonly id: string;
  readonly contextId: string;
  readonly owner: CallerId;
  readonly state: TaskState;
  readonly isTerminal: boolean;
  /** When the status last changed (ms since epoch): the order of ListTasks. */
  readonly statusTime: number;
  /** Sequence number of the newest event (of the one `snapshot` describes, when that is older: see newestSeq). */
  readonly lastSeq: number;
  /**
   * The newest event's sequence number when it is newer than lastSeq: a reader built from a
   * stored snapshot (Redis mode) starts at the snapshot, while a client may already have seen
   * the events after it (and resumes from one of them with Last-Event-ID).
   */
  readonly newestSeq?: number;
  /** Resolves once the task is in a terminal state. */
  readonly settled: Promise<void>;
  /** Streams following the task right now: a client that rejoined counts. */
  readonly listenerCount: number;
  /** Runs once the task settles (at once if it already has). */
  whenSettled(callback: () => void): void;
  /** The task as A2A `Task`, built on demand. */
  snapshot(options?: SnapshotOptions): Task;
  /** Whether every event after `seq` is still retained, so a resume from it loses nothing. */
  retainsAfter(seq: number): boolean;
  /**
   * Read-from-seq and follow in one step: hands the listener the events after its cursor, then
   * each new one, in order, never one twice. Returns the function that stops following.
   */
  follow(listener: TaskListener): () => void;
  /** Hands a listener that said it was not ready the events it has not had yet. */
  resume(listener: TaskListener): void;
  /** Keeps the events after `cursor` retained (up to twice the cap) until the returned function runs. */
  hold(cursor: number): () => void;
}

/**
 * The single writer of a task: the instance running it appends its events, and no other (a
 * shared store checks the writer's lease on every append). Each call appends the A2A events
 * that the change makes; all are no-ops once the task is terminal.
 */
export interface TaskWriter {
  /** A narration line: a WORKING status update. */
  narrate(text: string): void;
  /** A tool-call-v1 frame: the artifact update of the tool's artifact. */
  toolFrame(frame: ToolCallArtifactData): void;
  /**
   * A piece of the answer as it is written: an artifact update of the `answer` artifact with
   * `append` and `lastChunk` as given; the snapshot holds the answer so far (an empty piece
   * that does not append withdraws it).
   */
  answer(text: string, append: boolean, last: boolean): void;
  /** The answer artifact (unless the streamed pieces already ended with it), then COMPLETED (open tools closed as failed first). */
  complete(answer: string): void;
  fail(error: string): void;
  cancel(reason: string): void;
}

/** A task this instance created and writes. */
export type WrittenTask = TaskView & TaskWriter;

export interface NewTask {
  id: string;
  contextId: string;
  owner: CallerId;
  /** The user's message, stamped with the task and context ids. */
  message: Message;
  /** The message as the plain text the agent reads (and later turns get as history). */
  text: string;
}

export interface ListTasksQuery {
  contextId?: string;
  state?: TaskState;
  /** Only tasks whose status changed after this time (ms since epoch). */
  statusAfter?: number;
  pageSize: number;
  pageToken?: string;
}

export interface TaskPage {
  tasks: TaskView[];
  nextPageToken: string;
  totalSize: number;
}

/** One caller's view of a conversation (a contextId). */
export interface Conversation {
  /** Tasks the conversation holds for this caller (what maxHistoryLength caps). */
  tasks: number;
  /** The answered turns, oldest first: each task's question and answer. */
  turns: ChatTurn[];
}

/**
 * Where tasks live: their state, event logs, per-owner listings and conversations. The A2A front
 * reads it; the run's instance writes each task (see TaskWriter). The in-memory store is the
 * embedded default; a shared store lets any instance serve any task.
 */
export abstract class TaskStore {
  /**
   * Creates a task (SUBMITTED; event 1 is the Task) in its owner's listing and conversation. A
   * store that creates it at once may answer without a promise (the in-memory one does: every
   * promise and await on a send's path is an allocation and a microtask more).
   */
  abstract create(init: NewTask): WrittenTask | Promise<WrittenTask>;
  /** The task, if it has not expired. Ownership is checked by the caller of the store. */
  abstract get(id: string): Promise<TaskView | undefined>;
  /** The owner's tasks, most recently updated first, in pages chained by an opaque cursor. */
  abstract list(owner: CallerId, query: ListTasksQuery): Promise<TaskPage>;
  /** The conversation `contextId` as `owner` sees it (another caller's turns never join it). */
  abstract conversation(contextId: string, owner: CallerId): Promise<Conversation>;
  /**
   * Claims `owner`'s message `messageId` for a new task `taskId`, atomically: resolves undefined
   * when the claim is new, else with the id of the task that claimed it first (the message is a
   * retry). A claim lasts as long as its task is kept, and no longer. A store that claims at
   * once may answer without a promise, as `create` does.
   */
  abstract claimMessage(owner: CallerId, messageId: string, taskId: string): string | undefined | Promise<string | undefined>;
  /** Gives back a claim whose task was never created (its admission failed). */
  abstract releaseMessage(owner: CallerId, messageId: string, taskId: string): void;
  /**
   * Moves a claim that outlived its task (`stale` is gone) to `taskId`, atomically, only while it
   * still names `stale`; false when it does not. The in-memory store forgets a claim with its
   * task, so it never has such a claim.
   */
  replaceMessageClaim(owner: CallerId, messageId: string, stale: string, taskId: string): Promise<boolean> {
    void [owner, messageId, stale, taskId];
    return Promise.resolve(false);
  }
  /**
   * Asks the instance that writes the task to cancel its run (another instance, in a shared
   * store); that instance's `onCancelRequest` handler gets it.
   */
  abstract requestCancel(id: string, reason: string): Promise<void>;
  /** Streams following the task through other instances (what a disconnect grace counts as a rejoin). */
  abstract followersElsewhere(id: string): Promise<number>;
  /** Registers the handler of cancel requests for tasks this instance writes. */
  abstract onCancelRequest(handler: (id: string, reason: string) => void): void;
  /**
   * Registers what ends a task whose events the store can no longer keep (a shared store that
   * stayed unreachable too long): the task fails and its run is stopped. The in-memory store
   * never calls it.
   */
  onWriteFailure(handler: (id: string, reason: string) => void): void {
    void handler;
  }
  /** Forgets a terminal task after `afterMs` (its events, snapshot, listing and turn). */
  abstract expire(id: string, afterMs: number): void;
  /** Tasks this instance holds (running, or finished and not yet expired). */
  abstract size(): number;
  /** Stores what is still pending and stops; the tasks still running are the caller's to cancel first. */
  abstract close(): Promise<void>;
}

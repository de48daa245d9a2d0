import { Role, TaskState, type Artifact, type Task, type Message, type Part, type StreamResponse, type TaskStatus } from '@a2a-js/sdk';
import {
  TOOL_CALL_V1_ARTIFACT_NAME,
  emitToolCall,
  parseToolCall,
  type ToolCallArtifactData,
} from '../extensions';
import { randomBytes } from 'node:crypto';
import { isoTime } from '../common/iso-time';
import { EventLog } from './event-log';
import {
  FRAME_ID_START,
  TASK_EVENT_PACKING,
  TOOL_ARTIFACT_ID_PREFIX,
  TaskEvent,
  ToolFrameEvent,
  flat,
  frameNamesId,
  idEndInFrame,
  idFromFrame,
  toolCallIdText,
  toolFrameEventWeight,
  toolFrameHead,
} from './task-event';
import type { TaskView, TaskWriter } from './store/task-store';

/** An opaque id of the caller that created a task; `undefined` until authentication exists. */
export type CallerId = string | undefined;

export const ANSWER_ARTIFACT_ID = 'answer';
export const ANSWER_ARTIFACT_NAME = 'answer';
/** The answer's key among a task's artifacts (tools are keyed by their tool call ids, which could be 'answer'). */
const ANSWER_KEY = Symbol('answer');

// Read once: the SDK's module exports TaskState through a getter (a call and a megamorphic keyed
// load per read), and every frame asks isTerminalState.
const COMPLETED = TaskState.TASK_STATE_COMPLETED;
const FAILED = TaskState.TASK_STATE_FAILED;
const CANCELED = TaskState.TASK_STATE_CANCELED;
const REJECTED = TaskState.TASK_STATE_REJECTED;
const SUBMITTED = TaskState.TASK_STATE_SUBMITTED;
const WORKING = TaskState.TASK_STATE_WORKING;

/** Four comparisons, not a Set's hashing: every frame asks (a tool frame of a settled task is dropped). */
export function isTerminalState(state: TaskState): boolean {
  return state === COMPLETED || state === FAILED || state === CANCELED || state === REJECTED;
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

/**
 * The empty list every artifact and message this record builds holds (extensions, referenced
 * tasks): one frozen array instead of two per message a finished task keeps (10,000 kept by
 * default), each an object the major GC marks.
 */
const NO_STRINGS = Object.freeze([]) as unknown as string[];

/** The followers of a task nobody follows (one frozen list for all of them). */
const NO_FOLLOWERS: readonly TaskListener[] = Object.freeze([]);

/**
 * A compacted settled task's history and artifacts (built again on demand, see compactSettled):
 * one frozen list, and one empty map for all of them, which nothing writes (every writer returns
 * once the task is terminal).
 */
const NO_MESSAGES = Object.freeze([]) as unknown as Message[];
const NO_ARTIFACTS = new Map<string | symbol, Artifact | KeptTool>();
/** The artifacts of a task's first event (it has none yet). */
const NO_ARTIFACT_LIST = Object.freeze([]) as unknown as Artifact[];

function answerArtifact(text: string): Artifact {
  return { artifactId: ANSWER_ARTIFACT_ID, name: ANSWER_ARTIFACT_NAME, description: '', parts: [textPart(text)], metadata: undefined, extensions: NO_STRINGS };
}

/** Someone following a task's events from a sequence number on. */
export interface TaskListener {
  /** Sequence number of the last event this listener has been given. */
  cursor: number;
  push(event: TaskEvent): void;
  /**
   * Whether it takes an event now. While it does not, events wait in the task's log (no copy
   * per listener) until `TaskRecord.resume`.
   */
  ready?(): boolean;
  /** It fell so far behind that the events it needs next are gone from the log; it is dropped. */
  overrun(): void;
}

interface TaskRecordInit {
  id: string;
  contextId: string;
  owner: CallerId;
  /** The user's message, already stamped with the task and context ids. */
  message: Message;
  /** The message as plain text, kept for the history of later tasks in the same context. */
  text: string;
  maxEvents: number;
  /** Finished tools whose artifacts the task keeps (newest first); open tools are always kept. */
  maxFinishedTools: number;
  /** Called after each status change (the store's listing index follows it). */
  onStatus?: (task: TaskRecord) => void;
  /** Called with each event as it is logged (a shared store persists it). */
  onEvent?: (event: TaskEvent, task: TaskRecord) => void;
  /**
   * Whether the log is packed into blocks when the task settles (default true: a finished task's
   * events as compact as they get). A shared store that forgets the record as soon as its end is
   * stored says false: packing would only make new objects (a string of the task's frames, tens
   * of kB) that the young-generation GC copies, at the moment when tasks that started together
   * end together. A store that keeps the settled record says `keptWhenSettled` instead.
   */
  packWhenSettled?: boolean;
  /**
   * Whether the store keeps the record once it has settled, for replay, GetTask and ListTasks
   * (the in-memory store keeps up to 10,000): a task that kept no tool is then compacted as it
   * settles (see compactSettled), and its log is not packed (packWhenSettled is not read).
   */
  keptWhenSettled?: boolean;
  /**
   * The task as another writer left it (a shared store's snapshot and last event): this record
   * takes over its writing from `lastSeq + 1` on, instead of starting it with a Task event.
   */
  resumed?: {
    snapshot: Task;
    lastSeq: number;
    answerText?: string;
    /** Tool artifacts of the events after the snapshot (a shared store writes snapshots less often than events), oldest first. */
    laterToolArtifacts?: Artifact[];
    /**
     * The events already stored, contiguous and ending at `lastSeq` (e.g. the Task a front
     * wrote before a worker took the run): replayed from here like the record's own.
     */
    events?: TaskEvent[];
  };
}

export interface SnapshotOptions {
  /** Unset: all history; 0: none; n: the last n messages. */
  historyLength?: number;
  includeArtifacts?: boolean;
}

/** An event's weight in the log: its JSON's length. */
const eventBytes = (event: TaskEvent): number => event.weight;

/**
 * Listeners being pumped right now, innermost last (a listener follows one task): one stack for
 * every task rather than a set per task, which each of the 10,000 retained finished tasks would
 * keep; pumps nest only a few deep, so a lookup is a short scan, cheaper than a WeakSet's hashing.
 */
const PUMPING: TaskListener[] = [];

/**
 * One task of the in-memory store: its status, history and artifacts, and the ordered log of the
 * events its streams carry. Each change appends its events and hands them to the live listeners;
 * no event costs more than itself, however long the task has run (no copy of the task per event).
 */
export class TaskRecord implements TaskView, TaskWriter {
  readonly id: string;
  readonly contextId: string;
  readonly owner: CallerId;
  readonly userText: string;
  readonly log: EventLog<TaskEvent>;
  /**
   * Whether the status is terminal, kept with the status (written only where it is): every
   * frame asks, and the status is an object of its own, one more first touch per frame of a
   * cold task at 1,000 streams.
   */
  private ended = false;
  private current: TaskStatus;
  /** When the status last changed (ms since epoch): the order of ListTasks. */
  statusTime: number;
  answerText?: string;
  /** The answer streamed so far, and whether its last piece came. */
  private streamedAnswer: { text: string; last: boolean } | undefined;
  private settledPromise?: Promise<void>;

  private history: Message[];
  /** A compacted settled task's answer artifact's text, if it has one (see compactSettled). */
  private settledAnswer?: string;
  /** A compacted settled task's artifacts in order, when it had tools: a tool's as its latest event's number, the answer's as 0. */
  private settledArtifacts?: number[];
  /**
   * The answer's and the open tools' artifacts (the finished tools' are in `finished`, one open tool's in `soloOpen`), each
   * with the place where it first came (see inOrder). An open tool's is kept as a KeptTool (its
   * latest frame's event) by its tool call id (the frame's own string: no id built per frame),
   * and built only for a snapshot (snapshots are rare, frames are not); any other artifact by a
   * symbol of its own (ANSWER_KEY for the answer).
   */
  private artifacts = new Map<string | symbol, Artifact | KeptTool>();
  /** Where the answer's artifact first came (see inOrder): its first event's number, or its place in a resumed task's snapshot. */
  private answerFirst = 0;
  /** Where a resumed task's other artifacts came in its snapshot (negative: before any event of this record's). */
  private restoredFirst?: Map<symbol, number>;
  // The collections below are made on first use: a task without tool calls, streams that attach
  // late or settle callbacks needs none of them, and 10,000 finished tasks are kept by default.
  /**
   * The finished tools as they finished, oldest first, FINISHED_SLOTS slots each (its tool call
   * id unless that frame's JSON gives it, its latest frame's JSON, its latest event's number and
   * bits, where it first came) in
   * chunks made at their full size: a finished tool is no object of its own and no map entry, and
   * a running task (which at 1,000 streams is promoted with all it holds) keeps four slots per
   * finished tool, and no list or map table that is copied as it grows. An entry is its tool's
   * latest finish until the tool finishes or opens again (its id slot is then 0); past
   * maxFinishedTools the oldest goes. Found by id through `finishedIndex`.
   */
  private finished?: (FinishedSlot[] | undefined)[];
  /**
   * The live finished entries by tool call id: a hash table (open addressing, linear probing) of
   * positions + 1, each with its id's tag (see indexSlot; 0 an empty slot, -1 a removed one), in
   * a typed array (outside the JS heap once past 8 slots: the scavenges do not copy it).
   */
  private finishedIndex?: Float64Array;
  /** The index's slots that are not empty (live and removed ones): it is built again before they are half of it. */
  private indexUsed = 0;
  /** The position of the first slot of `finished[0]`. */
  private finishedBase = 0;
  /** The position of the oldest entry still queued. */
  private finishedHead = 0;
  /** The position the next finished entry gets. */
  private finishedEnd = 0;
  /** Finished tools kept: the entries the artifacts map holds the position of. */
  private finishedCount = 0;
  /** Tools started and not yet finished (`soloOpen` and the KeptTools in the artifacts map): closed as failed if the task ends first. */
  private openCount = 0;
  /**
   * An open tool kept outside the artifacts map: usually the only one. A tool call's set and
   * delete on the map of a long-lived task made it rehash into a new table every few calls, a
   * table the next scavenge then copied. Set when a tool opens while it is free; the others open
   * at the same time go to the map.
   */
  private soloOpen?: KeptTool;
  private readonly maxFinishedTools: number;
  private readonly onStatus?: (task: TaskRecord) => void;
  private readonly onEvent?: (event: TaskEvent, task: TaskRecord) => void;
  private readonly packWhenSettled: boolean;
  private readonly keptWhenSettled: boolean;
  /**
   * Its followers (usually one), in a list replaced rather than changed: every event goes through
   * it, and walking a Set made an iterator and its results per event. NO_FOLLOWERS while it has none.
   */
  private followers = NO_FOLLOWERS;
  /**
   * Its first follower (followers[0]) and whether it has others: every event is handed to them,
   * and a task with one follower (most) is then not read through the list (two objects, the
   * list and its store, each a first touch per frame of a cold task at 1,000 streams).
   */
  private lead?: TaskListener = undefined;
  private many = false;
  /** Cursors whose following events must stay in the log whatever its capacity. */
  private holds?: Set<{ cursor: number }>;
  private onSettled?: (() => void)[];
  /** A compacted settled task's kept tools' weights (see KeptTool) as they were summed when it was compacted. */
  private settledToolBytes = 0;
  /** The start of every tool frame event's JSON, up to its tool call id (the task's ids in it; see toolFrameHead). */
  private toolEventHead?: string;

  constructor(init: TaskRecordInit) {
    this.id = init.id;
    this.contextId = init.contextId;
    this.owner = init.owner;
    this.userText = init.text;
    this.history = [init.message];
    const earlier = init.resumed?.events ?? [];
    this.log = new EventLog<TaskEvent>(init.maxEvents, eventBytes, earlier[0]?.seq ?? (init.resumed?.lastSeq ?? 0) + 1, TASK_EVENT_PACKING);
    for (const event of earlier) this.log.append(event);
    this.maxFinishedTools = init.maxFinishedTools;
    this.onStatus = init.onStatus;
    this.onEvent = init.onEvent;
    this.packWhenSettled = init.packWhenSettled ?? true;
    this.keptWhenSettled = init.keptWhenSettled ?? false;
    this.statusTime = Date.now();
    this.current = { state: SUBMITTED, message: undefined, timestamp: isoTime(this.statusTime) };
    if (init.resumed) this.restore(init.resumed);
    // The Task as snapshot() would give it (no artifact yet), without its copies of the history and artifacts.
    else this.append({ payload: { $case: 'task', value: { id: this.id, contextId: this.contextId, status: this.status, artifacts: NO_ARTIFACT_LIST, history: this.history, metadata: undefined } } });
  }

  /** Takes the state a snapshot holds: status, history, answer, and which tools are still open. */
  private restore({ snapshot, answerText, laterToolArtifacts = [] }: NonNullable<TaskRecordInit['resumed']>): void {
    if (snapshot.status) {
      this.current = snapshot.status;
      this.ended = isTerminalState(snapshot.status.state);
    }
    const time = Date.parse(this.status.timestamp ?? '');
    if (Number.isFinite(time)) this.statusTime = time;
    this.history.splice(0, this.history.length, ...snapshot.history);
    this.answerText = answerText;
    const restored = [...snapshot.artifacts, ...laterToolArtifacts];
    restored.forEach((artifact, i) => {
      // Its place: before any event of this record's, in the snapshot's order.
      const place = i - restored.length;
      const frame = artifact.name === TOOL_CALL_V1_ARTIFACT_NAME ? parseToolCall(artifact.parts) : undefined;
      if (!frame) {
        const key = artifact.artifactId === ANSWER_ARTIFACT_ID ? ANSWER_KEY : Symbol(artifact.artifactId);
        if (key === ANSWER_KEY) this.answerFirst = place;
        else (this.restoredFirst ??= new Map()).set(key, place);
        this.artifacts.set(key, artifact);
        return;
      }
      // Kept as it came (the snapshot's artifact), open or among the finished (with no event).
      const id = frame.toolCallId;
      const found = this.toolOf(id);
      const first = found === undefined ? place : typeof found === 'number' ? this.finishedFirst(found) : found.first;
      if (frame.phase !== 'started') this.finishTool(id, found, artifact, -1, first);
      else (found instanceof KeptTool ? found : this.openTool(id, found, first)).restore(artifact);
    });
    if (this.isTerminal) this.settle();
  }

  /** Resolves once the task is in a terminal state. */
  get settled(): Promise<void> {
    this.settledPromise ??= new Promise((resolve) => this.whenSettled(resolve));
    return this.settledPromise;
  }

  get state(): TaskState {
    return this.status.state;
  }

  get isTerminal(): boolean {
    return this.ended;
  }

  get status(): TaskStatus {
    return this.current;
  }

  get listenerCount(): number {
    return this.followers.length;
  }

  get lastSeq(): number {
    return this.log.lastSeq;
  }

  retainsAfter(seq: number): boolean {
    return this.log.retainsAfter(seq);
  }

  /** Runs once the task settles (at once if it already has). */
  whenSettled(callback: () => void): void {
    if (this.isTerminal) callback();
    else (this.onSettled ??= []).push(callback);
  }

  /** A narration line: a WORKING status update whose message is the line. */
  narrate(text: string): void {
    if (this.isTerminal) return;
    this.setStatus(WORKING, text);
  }

  /** One tool-call-v1 frame: an artifact update of the tool's artifact, replacing its previous phase. */
  toolFrame(frame: ToolCallArtifactData): void {
    if (this.isTerminal) return;
    const id = frame.toolCallId;
    // A tool's frames usually come one after the other (started, then its end): toolOf asks the
    // one open tool outside the map (soloOpen) first, with no hash lookup.
    const found = this.toolOf(id);
    // The event's id part is the tool call id's text in the artifact id's JSON: for most ids the
    // id itself, which the task holds anyway (no string made or kept per tool call).
    const idPart = found === undefined ? toolCallIdText(id) : typeof found === 'number' ? this.finishedIdPart(found) : found.idPart();
    let event: ToolFrameEvent;
    try {
      event = this.toolFrameEvent(frame, idPart);
    } catch (err) {
      // args or result that JSON cannot carry (a BigInt, a cycle) reach the client as a note.
      frame = withUnserializableNoted(frame, err);
      event = this.toolFrameEvent(frame, idPart);
    }
    // Kept before the event goes out: a snapshot taken meanwhile (a stream attaching) then
    // holds the tool's latest phase.
    this.keepToolArtifact(event, id, found, frame.phase === 'started');
    this.commit(event);
  }

  /** Roughly what the task holds in memory: its retained events' JSON (the bulk) and its artifacts'. */
  get bytes(): number {
    return this.log.bytes + (this.artifacts === NO_ARTIFACTS ? this.settledToolBytes : this.keptToolBytes());
  }

  /**
   * The kept tools' weights, summed when asked (a store asks once, as the task ends): kept up
   * to date per frame instead, it cost two weighings of an event per frame.
   */
  private keptToolBytes(): number {
    let bytes = this.soloOpen?.weight(this.toolEventHead) ?? 0;
    for (const kept of this.artifacts.values()) if (kept instanceof KeptTool) bytes += kept.weight(this.toolEventHead);
    for (let pos = this.finishedHead; pos < this.finishedEnd; pos++) if (this.isFinished(pos)) bytes += this.finishedWeight(pos);
    return bytes;
  }

  /** The answer: an `answer` artifact, the answer in history, then COMPLETED. */
  /**
   * A piece of the answer as the model writes it: an artifact update of the `answer` artifact
   * carrying the piece (`append` and `lastChunk` as given). The snapshot holds the answer so
   * far; an empty piece that does not append withdraws it.
   */
  answer(text: string, append: boolean, last: boolean): void {
    if (this.isTerminal) return;
    this.streamedAnswer = { text: append && this.streamedAnswer ? this.streamedAnswer.text + text : text, last };
    const piece = answerArtifact(text);
    const event = new TaskEvent(this.log.nextSeq, {
      payload: { $case: 'artifactUpdate', value: { taskId: this.id, contextId: this.contextId, artifact: piece, append, lastChunk: last, metadata: undefined } },
    });
    if (this.streamedAnswer.text === '' && !last) this.artifacts.delete(ANSWER_KEY);
    else this.setAnswer(answerArtifact(this.streamedAnswer.text), event.seq);
    this.commit(event);
  }

  /**
   * The answer, then COMPLETED. When the streamed pieces already ended with exactly this text,
   * they stand; otherwise the whole answer goes out as one `answer` artifact.
   */
  complete(answer: string): void {
    if (this.isTerminal) return;
    this.closeOpenTools('the run ended before this tool finished');
    this.answerText = answer;
    this.history.push(this.agentMessage(`${this.id}-answer`, answer));
    if (!this.streamedAnswer?.last || this.streamedAnswer.text !== answer) {
      const artifact = answerArtifact(answer);
      this.append({
        payload: {
          $case: 'artifactUpdate',
          value: { taskId: this.id, contextId: this.contextId, artifact, append: false, lastChunk: true, metadata: undefined },
        },
      });
    }
    this.streamedAnswer = undefined;
    this.setStatus(COMPLETED);
  }

  fail(error: string): void {
    if (this.isTerminal) return;
    this.closeOpenTools(error);
    this.setStatus(FAILED, error);
  }

  cancel(reason: string): void {
    if (this.isTerminal) return;
    this.closeOpenTools('cancelled');
    this.setStatus(CANCELED, reason);
  }

  /** The task as A2A `Task`, built on demand (never per event). */
  snapshot(options: SnapshotOptions = {}): Task {
    const { historyLength, includeArtifacts = true } = options;
    const all = this.history === NO_MESSAGES ? this.settledHistory() : this.history;
    const history = historyLength === undefined ? [...all] : historyLength === 0 ? [] : all.slice(-historyLength);
    let artifacts: Artifact[] = [];
    if (includeArtifacts && this.artifacts === NO_ARTIFACTS) {
      artifacts = this.settledArtifactList().map((a) => (a instanceof ToolFrameEvent ? toolArtifact(JSON.parse(a.frameJson) as ToolCallArtifactData) : a));
    } else if (includeArtifacts) {
      artifacts = this.inOrder().map((a) => (typeof a === 'number' ? this.finishedArtifact(a) : a instanceof KeptTool ? a.artifact() : a));
    }
    return { id: this.id, contextId: this.contextId, status: this.status, artifacts, history, metadata: undefined };
  }

  /**
   * The task's artifacts as snapshot() lists them, a tool's as its latest frame's event where it
   * has one (the artifact's JSON is part of the event's: a shared store writes it from there,
   * without decoding the frame and encoding it again).
   */
  snapshotArtifacts(): (Artifact | ToolFrameEvent)[] {
    if (this.artifacts === NO_ARTIFACTS) return this.settledArtifactList();
    return this.inOrder().map((a) =>
      typeof a === 'number' ? (this.finishedEvent(a) ?? this.finishedArtifact(a)) : a instanceof KeptTool ? (a.latestEvent(this.toolEventHead) ?? a.artifact()) : a,
    );
  }

  /**
   * Follows the events after `listener.cursor`: the retained ones at once, then each new one as
   * it is appended. Both happen in one synchronous step, so no event can fall between replay and
   * live delivery. Returns the function that stops following.
   */
  follow(listener: TaskListener): () => void {
    if (!this.log.retainsAfter(listener.cursor)) {
      throw new Error(`task ${this.id} no longer holds the events after ${listener.cursor}`);
    }
    if (!this.followers.includes(listener)) this.setFollowers([...this.followers, listener]);
    this.pump(listener);
    return () => this.unfollow(listener);
  }

  private unfollow(listener: TaskListener): void {
    const followers = this.followers;
    if (!followers.includes(listener)) return;
    this.setFollowers(followers.length === 1 ? NO_FOLLOWERS : followers.filter((follower) => follower !== listener));
  }

  private setFollowers(followers: readonly TaskListener[]): void {
    this.followers = followers;
    this.lead = followers[0];
    this.many = followers.length > 1;
  }

  /**
   * Keeps the events after `cursor` in the log, past its capacity (up to twice it), until the
   * returned function is called: a stream that attaches later (the one that started the task)
   * loses nothing to a burst that comes first. A listener that is behind holds its place alike.
   */
  hold(cursor: number): () => void {
    const hold = { cursor };
    (this.holds ??= new Set()).add(hold);
    return () => {
      if (!this.holds?.delete(hold)) return;
      if (this.holds.size === 0) this.holds = undefined;
      this.trim();
    };
  }

  /** Hands a paused listener the events it has not had yet (see TaskListener.ready). */
  resume(listener: TaskListener): void {
    if (!this.followers.includes(listener)) return;
    this.pump(listener);
    this.trim();
  }

  /**
   * The events after this are still needed: by a hold, or by a listener that is behind. Asked on
   * every event once the log is full. The followers are walked by index, not with for...of: where
   * the list had been the frozen NO_FOLLOWERS as well (a server that has served empty tasks), V8's
   * optimised code called the array iterator instead, an iterator and a result object per frame.
   */
  private keepAfter(): number {
    let min = Number.POSITIVE_INFINITY;
    if (this.holds) for (const hold of this.holds) min = Math.min(min, hold.cursor);
    const followers = this.followers;
    for (let i = 0; i < followers.length; i++) min = Math.min(min, followers[i].cursor);
    return min;
  }

  private setStatus(state: TaskState, text?: string): void {
    this.statusTime = Date.now();
    const seq = this.log.lastSeq + 1;
    this.current = {
      state,
      message: text === undefined ? undefined : this.agentMessage(`${this.id}-${seq}`, text),
      timestamp: isoTime(this.statusTime),
    };
    const terminal = (this.ended = isTerminalState(state));
    this.append(
      { payload: { $case: 'statusUpdate', value: { taskId: this.id, contextId: this.contextId, status: this.status, metadata: undefined } } },
      terminal,
    );
    this.onStatus?.(this);
    if (terminal) this.settle();
  }

  private closeOpenTools(error: string): void {
    if (this.openCount === 0) return;
    const timestamp = isoTime(Date.now());
    const open: ToolCallArtifactData[] = [];
    // In the order they first came (a tool opened again keeps its first place), as the snapshot lists them.
    const kept = [...this.artifacts.values()].filter((a): a is KeptTool => a instanceof KeptTool);
    if (this.soloOpen) kept.push(this.soloOpen);
    kept.sort((a, b) => a.first - b.first);
    for (const tool of kept) open.push(tool.frame());
    for (const { toolCallId, name } of open) this.toolFrame({ toolCallId, name, phase: 'failed', error, timestamp });
  }

  private agentMessage(messageId: string, text: string): Message {
    return {
      messageId,
      contextId: this.contextId,
      taskId: this.id,
      role: Role.ROLE_AGENT,
      parts: [textPart(text)],
      metadata: undefined,
      extensions: NO_STRINGS,
      referenceTaskIds: NO_STRINGS,
    };
  }

  /** Logs a status update, the Task or the answer (tool frames go through toolFrameEvent). */
  private append(response: StreamResponse, terminal = false): void {
    const artifact = response.payload?.$case === 'artifactUpdate' ? response.payload.value.artifact : undefined;
    const event = new TaskEvent(this.log.nextSeq, response, false, terminal);
    // Only the answer comes here.
    if (artifact) this.setAnswer(artifact, event.seq);
    this.commit(event);
  }

  /**
   * A tool's artifact, holding its latest phase: kept while the tool is open; once it finished,
   * among the newest `maxFinishedTools` finished ones (a snapshot stays small however long the
   * task runs; every frame is still in the event log for replay). It keeps the strings of the
   * frame's event (which the log holds anyway), not the frame: the frame object is garbage once
   * the event is built, and the event once its streams have taken it.
   */
  private keepToolArtifact(event: ToolFrameEvent, id: string, found: KeptTool | number | undefined, open: boolean): void {
    const first = found === undefined ? event.seq : typeof found === 'number' ? this.finishedFirst(found) : found.first;
    if (open) {
      const kept = found instanceof KeptTool ? found : this.openTool(id, found, first);
      kept.latest(event);
      return;
    }
    this.finishTool(id, found, event.frameJson, event.seq * 4 + (event.lastChunk ? 1 : 0) + (event.idPart === id ? 0 : 2), first);
  }

  /** The answer's artifact; where it first came is this event's place unless it is kept already. */
  private setAnswer(artifact: Artifact, seq: number): void {
    if (!this.artifacts.has(ANSWER_KEY)) this.answerFirst = seq;
    this.artifacts.set(ANSWER_KEY, artifact);
  }

  /** A tool's kept state: open (its KeptTool), finished (its entry's position) or none. */
  private toolOf(id: string): KeptTool | number | undefined {
    const solo = this.soloOpen;
    if (solo !== undefined && solo.id === id) return solo;
    // The map's string keys are the other open tools'.
    const open = this.openCount > (solo === undefined ? 0 : 1) ? (this.artifacts.get(id) as KeptTool | undefined) : undefined;
    if (open !== undefined) return open;
    const pos = this.finishedCount > 0 ? this.findFinished(id) : -1;
    return pos < 0 ? undefined : pos;
  }

  /** A tool that opens (or opens again): a kept tool while it is open, in the place where it first came. */
  private openTool(id: string, found: KeptTool | number | undefined, first: number): KeptTool {
    const kept = new KeptTool(id, first);
    if (typeof found === 'number') {
      this.unindex(hashOf(id), found, -1);
      this.staleFinished(found);
      this.finishedCount -= 1;
    }
    this.openCount += 1;
    if (this.soloOpen === undefined) this.soloOpen = kept;
    else this.artifacts.set(id, kept);
    return kept;
  }

  /**
   * A tool that finishes (or finishes again, or is restored finished): the newest finished entry,
   * its kept tool (if it was open) left to die young; past maxFinishedTools the oldest goes.
   * `json` is its latest frame's JSON, or a restored one's artifact (whose `bits` are -1).
   */
  private finishTool(id: string, found: KeptTool | number | undefined, json: string | Artifact, bits: number, first: number): void {
    if (found instanceof KeptTool) {
      this.openCount -= 1;
      if (found === this.soloOpen) this.soloOpen = undefined;
      else this.artifacts.delete(id);
    }
    // Its id is kept only when its frame's JSON does not give it back (idInFrame): a tool call id
    // is a string of its own, new with the frame, which a running task's entry would have the
    // scavenges promote (at 1,000 streams, ~12 B per frame) and then drop as the task settles.
    // Its id's hash is kept in its place (a small integer: no object), for the index.
    const hash = hashOf(id);
    const named = typeof json === 'string' && bits % 4 < 2 && frameNamesId(json, id);
    const pos = this.pushFinished(named ? hash + 1 : id, json, bits, first);
    if (typeof found === 'number') {
      this.unindex(hash, found, pos);
      this.staleFinished(found);
    } else {
      this.finishedCount += 1;
      this.index(hash, pos);
    }
    while (this.finishedCount > this.maxFinishedTools) this.dropOldestFinished();
    // The entries hold the kept finished tools and at most as many stale ones (plus a margin).
    if (this.finishedEnd - this.finishedHead > 2 * this.finishedCount + 64) this.compactFinished();
  }

  /** Appends a finished entry (`id` its tool call id, or its hash + 1 when its frame's JSON gives it: see FINISHED_SLOTS); returns its position. */
  private pushFinished(id: string | number, json: string | Artifact, bits: number, first: number): number {
    const chunks = (this.finished ??= []);
    const pos = this.finishedEnd;
    const offset = pos - this.finishedBase;
    const index = Math.floor(offset / FINISHED_CHUNK);
    if (index === chunks.length) chunks.push(new Array<FinishedSlot>(FINISHED_CHUNK * FINISHED_SLOTS));
    const chunk = chunks[index] as FinishedSlot[];
    const at = (offset % FINISHED_CHUNK) * FINISHED_SLOTS;
    chunk[at] = id;
    chunk[at + 1] = json;
    chunk[at + 2] = bits;
    chunk[at + 3] = first;
    this.finishedEnd = pos + 1;
    return pos;
  }

  /** The oldest queued entry goes: its tool's artifact with it, unless the tool finished or opened again since (then it is stale). */
  private dropOldestFinished(): void {
    const chunks = this.finished as FinishedSlot[][];
    const pos = this.finishedHead;
    const offset = pos - this.finishedBase;
    const index = Math.floor(offset / FINISHED_CHUNK);
    const chunk = chunks[index];
    const at = (offset % FINISHED_CHUNK) * FINISHED_SLOTS;
    const live = isLiveId(chunk[at]);
    const hash = live ? entryHash(chunk, at) : 0;
    chunk[at] = chunk[at + 1] = chunk[at + 2] = chunk[at + 3] = 0;
    this.finishedHead = pos + 1;
    if (live) {
      this.unindex(hash, pos, -1);
      this.finishedCount -= 1;
    }
    if (at + FINISHED_SLOTS < chunk.length) return;
    // Its chunk is spent: let it go, and now and then the list's spent front.
    (chunks as (FinishedSlot[] | undefined)[])[index] = undefined;
    if (index >= 63 && 2 * (index + 1) >= chunks.length) {
      this.finished = chunks.slice(index + 1);
      this.finishedBase += (index + 1) * FINISHED_CHUNK;
    }
  }

  /** Drops the stale entries (of tools that finished again, or opened again): the live ones are moved to new positions after all given so far. */
  private compactFinished(): void {
    const chunks = this.finished as FinishedSlot[][];
    const base = this.finishedBase;
    const end = this.finishedEnd;
    const head = this.finishedHead;
    this.finished = [];
    this.finishedBase = this.finishedHead = end;
    for (let pos = head; pos < end; pos++) {
      const chunk = chunks[Math.floor((pos - base) / FINISHED_CHUNK)];
      const at = ((pos - base) % FINISHED_CHUNK) * FINISHED_SLOTS;
      const id = chunk[at] as string | number;
      if (isLiveId(id)) this.pushFinished(id, chunk[at + 1] as string | Artifact, chunk[at + 2] as number, chunk[at + 3] as number);
    }
    this.buildIndex();
  }

  /** Whether the entry at this queued position is its tool's latest finish. */
  private isFinished(pos: number): boolean {
    return isLiveId(this.finishedChunk(pos)[this.finishedAt(pos)]);
  }

  /** Marks an entry stale (its tool finished or opened again), letting go of its JSON. */
  private staleFinished(pos: number): void {
    const chunk = this.finishedChunk(pos);
    const at = this.finishedAt(pos);
    chunk[at] = chunk[at + 1] = 0;
  }

  /** Where it first came (see inOrder). */
  private finishedFirst(pos: number): number {
    return this.finishedChunk(pos)[this.finishedAt(pos) + 3] as number;
  }

  /** The position of a tool's live finished entry, or -1. */
  private findFinished(id: string): number {
    const index = this.finishedIndex;
    if (index === undefined) return -1;
    const mask = index.length - 1;
    const hash = hashOf(id);
    const tag = hash >>> TAG_SHIFT;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = index[i];
      if (slot === 0) return -1;
      // Another id's entry is told apart by its tag, mostly: its chunk and JSON are not read.
      if (slot > 0 && Math.floor(slot / TAG_UNIT) === tag) {
        const pos = (slot % TAG_UNIT) - 1;
        const chunk = this.finishedChunk(pos);
        const at = this.finishedAt(pos);
        const kept = chunk[at];
        if (kept === id || (kept === hash + 1 && frameNamesId(chunk[at + 1] as string, id))) return pos;
      }
    }
  }

  /** Indexes a new live entry (its tool has none yet) by its id's hash. */
  private index(hash: number, pos: number): void {
    const index = this.finishedIndex;
    // Built again (with it) before the used slots are half of the table: a probe always meets an empty one soon.
    if (index === undefined || 2 * (this.indexUsed + 1) > index.length) return this.buildIndex();
    const mask = index.length - 1;
    let i = hash & mask;
    while (index[i] > 0) i = (i + 1) & mask;
    if (index[i] === 0) this.indexUsed += 1;
    index[i] = indexSlot(hash, pos);
  }

  /** Moves a tool's index slot (its id's hash) from its entry at `pos` to the one at `to`, or removes it (`to` -1). */
  private unindex(hash: number, pos: number, to: number): void {
    const index = this.finishedIndex as Float64Array;
    const mask = index.length - 1;
    const slot = indexSlot(hash, pos);
    let i = hash & mask;
    while (index[i] !== slot) i = (i + 1) & mask;
    index[i] = to < 0 ? -1 : indexSlot(hash, to);
  }

  /** The index of the live entries, at most a quarter full. */
  private buildIndex(): void {
    let size = 16;
    while (size < 4 * this.finishedCount) size *= 2;
    const index = (this.finishedIndex = new Float64Array(size));
    this.indexUsed = 0;
    const mask = size - 1;
    for (let pos = this.finishedHead; pos < this.finishedEnd; pos++) {
      const chunk = this.finishedChunk(pos);
      const at = this.finishedAt(pos);
      if (!isLiveId(chunk[at])) continue;
      const hash = entryHash(chunk, at);
      let i = hash & mask;
      while (index[i] !== 0) i = (i + 1) & mask;
      index[i] = indexSlot(hash, pos);
      this.indexUsed += 1;
    }
  }

  /**
   * The artifacts in the order they first came: the answer's and open tools' (kept in the map
   * and soloOpen) and the finished tools' merged by their places (a snapshot's, not a frame's, work).
   */
  private inOrder(): (Artifact | KeptTool | number)[] {
    const placed: { first: number; artifact: Artifact | KeptTool | number }[] = [];
    if (this.soloOpen) placed.push({ first: this.soloOpen.first, artifact: this.soloOpen });
    for (const [key, artifact] of this.artifacts) {
      const first = artifact instanceof KeptTool ? artifact.first : key === ANSWER_KEY ? this.answerFirst : (this.restoredFirst?.get(key as symbol) ?? 0);
      placed.push({ first, artifact });
    }
    for (let pos = this.finishedHead; pos < this.finishedEnd; pos++) if (this.isFinished(pos)) placed.push({ first: this.finishedFirst(pos), artifact: pos });
    return placed.sort((a, b) => a.first - b.first).map((entry) => entry.artifact);
  }

  /** The chunk holding a finished entry (finishedAt gives its first slot: its id or its id's hash + 1, then its JSON and bits). */
  private finishedChunk(pos: number): FinishedSlot[] {
    return (this.finished as FinishedSlot[][])[Math.floor((pos - this.finishedBase) / FINISHED_CHUNK)];
  }

  private finishedAt(pos: number): number {
    return ((pos - this.finishedBase) % FINISHED_CHUNK) * FINISHED_SLOTS;
  }

  /** A finished entry's bits: its latest event's number × 4, plus 1 for a last chunk, plus 2 when JSON escapes some of its id; -1 for a restored one. */
  private finishedBits(pos: number): number {
    return this.finishedChunk(pos)[this.finishedAt(pos) + 2] as number;
  }

  /** Its events' id part (as KeptTool.idPart). */
  private finishedIdPart(pos: number): string {
    const chunk = this.finishedChunk(pos);
    const at = this.finishedAt(pos);
    const id = chunk[at];
    if (typeof id === 'number') return idFromFrame(chunk[at + 1] as string);
    const bits = chunk[at + 2] as number;
    return bits >= 0 && bits % 4 < 2 ? (id as string) : toolCallIdText(id as string);
  }

  /** The length of its events' id part (finishedIdPart's), without making it. */
  private finishedIdPartLength(pos: number): number {
    const chunk = this.finishedChunk(pos);
    const at = this.finishedAt(pos);
    return typeof chunk[at] === 'number' ? idEndInFrame(chunk[at + 1] as string) - FRAME_ID_START : this.finishedIdPart(pos).length;
  }

  /** Its latest event's number; undefined for a restored one. */
  private finishedSeq(pos: number): number | undefined {
    const bits = this.finishedBits(pos);
    return bits < 0 ? undefined : Math.floor(bits / 4);
  }

  /** Its latest event, made again from its parts (as KeptTool.latestEvent); undefined for a restored one. */
  private finishedEvent(pos: number): ToolFrameEvent | undefined {
    const bits = this.finishedBits(pos);
    if (bits < 0 || this.toolEventHead === undefined) return undefined;
    const json = this.finishedChunk(pos)[this.finishedAt(pos) + 1] as string;
    return new ToolFrameEvent(Math.floor(bits / 4), this.toolEventHead, this.finishedIdPart(pos), json, bits % 2 === 1);
  }

  /** Its artifact (as KeptTool.artifact). */
  private finishedArtifact(pos: number): Artifact {
    const json = this.finishedChunk(pos)[this.finishedAt(pos) + 1] as string | Artifact;
    return typeof json === 'string' ? toolArtifact(JSON.parse(json) as ToolCallArtifactData) : json;
  }

  /** Its latest event's JSON's bytes (as KeptTool.weight). */
  private finishedWeight(pos: number): number {
    const bits = this.finishedBits(pos);
    if (bits < 0 || this.toolEventHead === undefined) return 0;
    const json = this.finishedChunk(pos)[this.finishedAt(pos) + 1] as string;
    return toolFrameEventWeight(this.toolEventHead, this.finishedIdPartLength(pos) + json.length, bits % 2 === 1);
  }

  private trim(): void {
    this.log.trim(this.keepAfter());
    this.dropOverrun();
  }

  /** Drops the listeners whose next events the cap took away (more than twice the cap behind). */
  private dropOverrun(): void {
    // By index for the reason keepAfter gives; over the list as it is now (unfollow replaces it).
    const followers = this.followers;
    for (let i = 0; i < followers.length; i++) {
      const listener = followers[i];
      if (this.log.retainsAfter(listener.cursor)) continue;
      this.unfollow(listener);
      listener.overrun();
    }
  }

  /** Logs a built event and hands it to the listeners. */
  private commit(event: TaskEvent): void {
    const first = this.log.firstSeq;
    // Only a log at capacity trims: only then does it matter which events readers still need.
    const keepAfter = this.log.size >= this.log.capacity ? this.keepAfter() : Number.POSITIVE_INFINITY;
    // A tool frame's event goes into the log's open block now, not after the next four events: at
    // 1,000 streams that is about a scavenge later, so each event object survived one. The block
    // keeps only its strings, which the log needs anyway; the followers take the event from here
    // (pump), and one that has not taken it yet (paused) gets it back from the block. Straight
    // into the block when no other event waits in the log's tail (the usual case), else after
    // the pump with them (cool).
    const cooled = event.isToolFrame && this.log.appendCooled(event, keepAfter);
    if (!cooled) this.log.append(event, keepAfter);
    this.onEvent?.(event, this);
    // A listener can only have fallen out of the log if events left it.
    if (this.log.firstSeq !== first) this.dropOverrun();
    // The list as it is now: one a push adds was pumped by follow(), one it drops stops in pump().
    const lead = this.lead;
    if (!this.many) {
      if (lead !== undefined) this.pump(lead, event);
    } else {
      const followers = this.followers;
      for (let i = 0; i < followers.length; i++) this.pump(followers[i], event);
    }
    if (event.isToolFrame && !cooled) this.log.cool();
  }

  /**
   * The frame's event, serialised by hand: exactly the JSON `StreamResponse.toJSON` gives for
   * the artifact update of `toolArtifact(frame)` (a unit spec holds the two equal), without the
   * codec's object graph per frame. Throws as JSON.stringify does for a BigInt or a cycle.
   */
  private toolFrameEvent(frame: ToolCallArtifactData, idPart: string): ToolFrameEvent {
    this.toolEventHead ??= toolFrameHead(this.id, this.contextId);
    return new ToolFrameEvent(this.log.nextSeq, this.toolEventHead, idPart, flat(JSON.stringify(frame)), frame.phase !== 'started');
  }

  /**
   * Hands a listener the events after its cursor, in order, while it is ready (also those a
   * push appends meanwhile). `latest`, the event just committed, is handed as it is (not read
   * back from the log, where a cooled one is in a block).
   */
  private pump(listener: TaskListener, latest?: TaskEvent): void {
    // Searched only when a pump runs already (a push that appended): most start with none.
    if (PUMPING.length !== 0 && PUMPING.includes(listener)) return;
    PUMPING.push(listener);
    const latestSeq = latest === undefined ? 0 : latest.seq;
    try {
      // A task's first follower is asked first (most tasks have one): no search of the list for it (a list of one holds only it).
      while (listener.cursor < this.log.lastSeq && (this.lead === listener || (this.many && this.followers.includes(listener)))) {
        if (listener.ready && !listener.ready()) return;
        const seq = listener.cursor + 1;
        const event = seq === latestSeq ? latest : this.log.get(seq);
        // trim() drops a listener before the events it needs go, so this cannot happen.
        if (!event) throw new Error(`task ${this.id}: event ${listener.cursor + 1} is missing from the log`);
        listener.cursor += 1;
        listener.push(event);
      }
    } finally {
      // Pumps nest (a push may append and pump again), so this one is the last one in.
      PUMPING.pop();
    }
  }

  /**
   * A settled task as its store keeps it, with fewer objects: its artifacts' map and kept tools
   * dropped (a snapshot, for GetTask and ListTasks, builds a tool's artifact again from its
   * latest event, the answer's from its text), its history too (the user's message is in its
   * Task event, the answer's message is built from the answer). For an empty task that is ~25
   * of its ~65 objects, all still young when it ends: the next scavenge drops them instead of
   * copying them twice, and no mark-compact marks them while it is kept. Its events stay as they
   * are: packing a small log into one block kept fewer objects still (1.70 instead of 2.09 KiB
   * per kept empty task) but cost more CPU per task than it saved (see docs/performance.md).
   */
  private compactSettled(): void {
    // From now on no event leaves the log: no trim drops one while it is within its capacity.
    if (this.log.size > this.log.capacity) return;
    const answer = this.artifacts.get(ANSWER_KEY) as Artifact | undefined;
    // No tool kept, at most the answer (every task without tool calls): nothing to put in order
    // or weigh, and no list, entry or iterator made for it.
    const toolless = this.soloOpen === undefined && this.finishedCount === 0 && this.artifacts.size === (answer === undefined ? 0 : 1);
    const order = toolless ? undefined : this.settledArtifactOrder();
    if (!toolless && order === undefined) return;
    const content = answer?.parts[0]?.content;
    this.settledAnswer = content?.$case === 'text' ? content.value : undefined;
    this.settledArtifacts = order?.some((entry) => entry > 0) ? order : undefined;
    this.settledToolBytes = toolless ? 0 : this.keptToolBytes();
    this.artifacts = NO_ARTIFACTS;
    this.soloOpen = undefined;
    this.finished = undefined;
    this.finishedIndex = undefined;
    // Only complete() adds to the history: the answer's message.
    if (this.log.firstSeq === 1 && this.history.length === (this.state === COMPLETED ? 2 : 1)) this.history = NO_MESSAGES;
  }

  /**
   * The artifacts in order as numbers (a tool's its latest event's, the answer's 0), or undefined
   * when one cannot be built again from those (another writer's artifact, or an event gone).
   */
  private settledArtifactOrder(): number[] | undefined {
    const order: number[] = [];
    const answer = this.artifacts.get(ANSWER_KEY);
    for (const artifact of this.inOrder()) {
      const seq = typeof artifact === 'number' ? this.finishedSeq(artifact) : artifact instanceof KeptTool ? artifact.latestSeq : undefined;
      if (artifact === answer) order.push(0);
      else if (seq !== undefined && seq >= this.log.firstSeq) order.push(seq);
      else return undefined;
    }
    return order;
  }

  /** A compacted task's artifacts as snapshotArtifacts() lists them: a tool's as its latest event. */
  private settledArtifactList(): (Artifact | ToolFrameEvent)[] {
    const answer = (): Artifact => answerArtifact(this.settledAnswer ?? '');
    if (!this.settledArtifacts) return this.settledAnswer === undefined ? [] : [answer()];
    return this.settledArtifacts.map((seq) => (seq === 0 ? answer() : (this.log.get(seq) as ToolFrameEvent)));
  }

  /** A compacted task's history: the user's message as its Task event holds it, and the answer's message (as complete() made it). */
  private settledHistory(): Message[] {
    const payload = (this.log.get(1) as TaskEvent).response.payload;
    if (payload?.$case !== 'task') throw new Error(`task ${this.id}: its first event is not its Task`);
    const history = payload.value.history.slice(0, 1);
    if (this.state === TaskState.TASK_STATE_COMPLETED) history.push(this.agentMessage(`${this.id}-answer`, this.answerText ?? ''));
    return history;
  }

  private settle(): void {
    if (this.keptWhenSettled) {
      this.compactSettled();
      this.log.fit();
    }
    // The task is kept for replay as it is now: its events in blocks, not one object each.
    else if (this.packWhenSettled) this.log.pack();
    const callbacks = this.onSettled;
    this.onSettled = undefined;
    if (callbacks) for (const callback of callbacks) callback();
  }
}

/**
 * An open tool's artifact as the task keeps it: its latest frame's event (the artifact is built
 * from the event's frame JSON only for a snapshot), or the artifact a resumed task's snapshot held.
 */
class KeptTool {
  /**
   * Before its first frame, the artifact a resumed task's snapshot held (it is restored while it
   * has no frame JSON); after, its latest frame decoded for a snapshot, kept for the next one
   * until the tool's next frame (a shared store snapshots often). One field for both: a kept
   * tool lives as long as the tool is open.
   */
  private parsed?: Artifact | ToolCallArtifactData;
  /**
   * Its latest frame's event, as the string and number it is made of rather than the event
   * itself: the event dies young once its streams have taken it (the log keeps its strings),
   * instead of living, promoted, as long as the task runs. Undefined until its first frame. Its
   * id part is the tool call id's text, for most ids the id itself (no second string kept).
   */
  private frameJson?: string;
  /** That event's sequence number × 4, plus 1 when it is a last chunk, plus 2 when its id part is not the id itself (JSON escapes some of it). */
  private seqAndBits = 0;

  constructor(
    /** Its key in the task's artifacts: the tool call id. */
    readonly id: string,
    /** Where it first came among the task's artifacts (see TaskRecord.inOrder). */
    readonly first: number,
  ) {}

  /** Its events' id part (after the task's toolFrameHead): the tool call id's text in the artifact id's JSON. */
  idPart(): string {
    // A restored one has had no event here: the id is read as the first frame reads it.
    return (this.seqAndBits & 2) === 0 && this.frameJson !== undefined ? this.id : toolCallIdText(this.id);
  }

  /** Takes the artifact a resumed task's snapshot holds (as it is until the tool's next frame). */
  restore(artifact: Artifact): void {
    this.parsed = artifact;
    this.frameJson = undefined;
  }

  latest(event: ToolFrameEvent): void {
    this.frameJson = event.frameJson;
    this.seqAndBits = event.seq * 4 + (event.lastChunk ? 1 : 0) + (event.idPart === this.id ? 0 : 2);
    this.parsed = undefined;
  }

  /** Its latest frame's sequence number; undefined for a restored one. */
  get latestSeq(): number | undefined {
    return this.frameJson === undefined ? undefined : Math.floor(this.seqAndBits / 4);
  }

  /** Its latest frame's event (made again from its parts, with the task's tool frame head); undefined for a restored one. */
  latestEvent(head: string | undefined): ToolFrameEvent | undefined {
    if (this.frameJson === undefined || head === undefined) return undefined;
    return new ToolFrameEvent(Math.floor(this.seqAndBits / 4), head, this.idPart(), this.frameJson, (this.seqAndBits & 1) === 1);
  }

  /** The bytes of its latest event's JSON (a fair measure of what the artifact holds); 0 for a restored one. */
  weight(head: string | undefined): number {
    if (this.frameJson === undefined || head === undefined) return 0;
    return toolFrameEventWeight(head, this.idPart().length + this.frameJson.length, (this.seqAndBits & 1) === 1);
  }

  frame(): ToolCallArtifactData {
    if (this.frameJson === undefined) return parseToolCall((this.parsed as Artifact).parts) as ToolCallArtifactData;
    this.parsed ??= JSON.parse(this.frameJson) as ToolCallArtifactData;
    return this.parsed as ToolCallArtifactData;
  }

  artifact(): Artifact {
    return this.frameJson === undefined ? (this.parsed as Artifact) : toolArtifact(this.frame());
  }
}

/** A slot of the finished chunks: a tool call id, a frame's JSON or a restored artifact, or a number. */
type FinishedSlot = string | Artifact | number;
/**
 * Slots per finished tool: its tool call id, or, when its frame's JSON gives the id back
 * (frameNamesId: the id is read from the JSON, not kept), that id's hash + 1 (a small integer);
 * 0 once stale. Then its latest frame's JSON (a restored one's artifact), its bits (see
 * finishedBits), where it first came.
 */
const FINISHED_SLOTS = 4;

/** Whether a finished entry's id slot is a live entry's (its id, or its id's hash + 1), not a stale or dropped one's (0). */
function isLiveId(slot: FinishedSlot | undefined): boolean {
  return typeof slot === 'string' || (typeof slot === 'number' && slot > 0);
}

/** The hash of a live finished entry's tool call id (hashOf): kept in its id slot when the id is not. */
function entryHash(chunk: readonly FinishedSlot[], at: number): number {
  const id = chunk[at];
  return typeof id === 'string' ? hashOf(id) : (id as number) - 1;
}

/**
 * The finished tools' index's seed, drawn once per process: tool call ids come from models and
 * remote agents, and with a hash known in advance ids could be chosen to fall on one run of the
 * table, so that every lookup walks all the kept finished tools.
 */
const HASH_SEED = randomBytes(4).readUInt32LE(0);

/**
 * A tool call id's hash for the finished tools' index: FNV-1a over its UTF-16 units from the
 * process's seed, then MurmurHash3's finaliser. The index keeps the low bits, and FNV-1a's low
 * bits depend only on the low bits of the characters (ids differing only in their characters'
 * high bits would share a slot, whatever the seed); the finaliser mixes every bit into them.
 */
function hashOf(id: string): number {
  let hash = HASH_SEED;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  // 29 bits: + 1, still a small integer (V8 keeps up to 2^30 - 1 unboxed), which a finished entry keeps in place of an id (see FINISHED_SLOTS).
  return (hash ^ (hash >>> 16)) >>> 3;
}

/** A finished entry's index slot: its position + 1, and above it its id's hash's high bits (a lookup reads no other id's entry). */
function indexSlot(hash: number, pos: number): number {
  return (hash >>> TAG_SHIFT) * TAG_UNIT + pos + 1;
}
/** The index slot's unit of the tag (positions + 1 below it: a task finishes fewer than 2^32 tools), and the hash bits the tag drops (exact in a double: 17 + 32 bits). */
const TAG_UNIT = 2 ** 32;
const TAG_SHIFT = 12;

/** Finished tools per chunk. */
const FINISHED_CHUNK = 32;

function toolArtifactId(toolCallId: string): string {
  return TOOL_ARTIFACT_ID_PREFIX + toolCallId;
}

/** A tool's artifact, holding one frame (its latest phase). */
export function toolArtifact(frame: ToolCallArtifactData): Artifact {
  return {
    artifactId: toolArtifactId(frame.toolCallId),
    name: TOOL_CALL_V1_ARTIFACT_NAME,
    description: '',
    parts: [emitToolCall(frame)],
    metadata: undefined,
    extensions: [],
  };
}

function withUnserializableNoted(frame: ToolCallArtifactData, err: unknown): ToolCallArtifactData {
  const note = `[not serialisable: ${err instanceof Error ? err.message : String(err)}]`;
  if (frame.phase === 'started') return { ...frame, args: note };
  if (frame.phase === 'completed') return { ...frame, result: note };
  return { ...frame, error: note };
}

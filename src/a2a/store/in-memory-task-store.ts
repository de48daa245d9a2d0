import type { TaskState } from '@a2a-js/sdk';
import { invalidParams } from '../a2a-errors';
import { joined } from '../task-event';
import { TaskRecord, type CallerId } from '../task-record';
import { RecencyIndex, type RecencySlots } from './recency-index';
import { TaskStore, type Conversation, type ListTasksQuery, type NewTask, type TaskPage, type TaskView, type WrittenTask } from './task-store';

export interface InMemoryTaskStoreOptions {
  /** Events kept per task for replay. */
  maxEventsPerTask: number;
  /** Finished tools' artifacts kept per task (open tools are always kept). */
  maxFinishedToolsPerTask: number;
  /** Finished tasks kept; past it the oldest finished is forgotten first. */
  maxRetainedTasks: number;
  /** Bytes the finished tasks may hold; past it the oldest finished are forgotten first. */
  maxRetainedBytes: number;
}

/**
 * A task as this store keeps it: its record, with the store's bookkeeping of it on the same
 * object. One map entry per kept task (its id) instead of one in each of five maps and in the
 * listing indexes' maps: each of those held every kept task (10,000 by default), and forgetting
 * the oldest one touched each of them, far from the cache.
 */
class StoredTask extends TaskRecord {
  /** Whether the store still keeps it (a forgotten task's status changes file nothing). */
  kept = true;
  /** Its message's claim, forgotten with it. */
  claim: string | undefined = undefined;
  /**
   * When it expires (the store's clock, see `now`), once it is finished and has a TTL (a queue
   * entry with another time is stale).
   */
  expiresAt: number | undefined = undefined;
  /** The bytes it held when it finished (what maxRetainedBytes counts); undefined while it runs. */
  finishedBytes: number | undefined = undefined;
  /** The state it is filed under in its owner's index of that state. */
  filedState: TaskState | undefined = undefined;
  /** Its slots in its owner's index of all tasks and in that of its state (see RecencyIndex). */
  allSlot: number | undefined = undefined;
  stateSlot: number | undefined = undefined;
}

const ALL_SLOTS: RecencySlots<StoredTask> = {
  get: (task) => task.allSlot,
  set: (task, slot) => {
    task.allSlot = slot;
  },
};
/** One slot for every state's index: a task is filed under one state at a time. */
const STATE_SLOTS: RecencySlots<StoredTask> = {
  get: (task) => task.stateSlot,
  set: (task, slot) => {
    task.stateSlot = slot;
  },
};

/** One owner's tasks, newest update first: all of them, and per state (what ListTasks filters on). */
interface OwnerIndex {
  all: RecencyIndex<StoredTask>;
  byState: Map<TaskState, RecencyIndex<StoredTask>>;
}

/**
 * The embedded task store: every task in this process's memory. Finished tasks are forgotten
 * after their TTL, or earlier, oldest first, when more than `maxRetainedTasks` of them (or more
 * than `maxRetainedBytes`) are kept.
 */
export class InMemoryTaskStore extends TaskStore {
  private readonly tasks = new Map<string, StoredTask>();
  /**
   * Each conversation's tasks: the task itself while it holds one (most do: an array of one per
   * kept task was two objects more for every collection to copy and mark), else an array (a Set
   * per task cost more).
   */
  private readonly contexts = new Map<string, StoredTask | StoredTask[]>();
  private readonly owners = new Map<CallerId, OwnerIndex>();
  /**
   * The finished tasks' expiry times (each task's `expiresAt`) soonest first from `expiryHead` on:
   * one timer for the soonest instead of one per finished task (10,000 timers alive by default).
   * A queue entry whose time is not its task's current one is stale and skipped.
   */
  private expiring = 0;
  /**
   * The queue as two parallel arrays (ids, times), not an object per entry the young generation
   * would copy and promote; entries [expiryHead, expiryEnd) are queued. Compacted in place (see
   * compactInPlace).
   */
  private expiryIds: string[] = [];
  private expiryAts: number[] = [];
  private expiryHead = 0;
  private expiryEnd = 0;
  private expiryTimer?: NodeJS.Timeout;
  private expiryTimerAt = Number.POSITIVE_INFINITY;
  /** Claimed messages (owner and messageId) to their task. */
  private readonly messages = new Map<string, string>();
  /**
   * Claims whose task is not created yet, by task id: the task takes its claim when it is
   * created (to forget it with the task), so this map holds only the sends being admitted.
   */
  private readonly pendingClaims = new Map<string, string>();
  /**
   * The one pending claim most sends have (each creates its task right after claiming its
   * message), held here rather than in `pendingClaims`: a Map emptied once per task makes V8
   * allocate it a new table each time, which the young generation then promotes.
   */
  private pendingId: string | undefined = undefined;
  private pendingKey: string | undefined = undefined;
  /** Finished tasks kept, and the bytes they hold. */
  private finishedCount = 0;
  private finishedBytes = 0;
  /**
   * The finished tasks' ids, oldest first from `finishedHead` on (an id whose task is no longer
   * kept finished was forgotten earlier and is skipped). Not the Map's own order: a Map used as a queue keeps
   * its deleted entries as holes until it is rehashed, and reading its oldest key walks them
   * (thousands per eviction with 10,000 tasks kept).
   */
  private finishedOrder: string[] = [];
  private finishedHead = 0;
  private finishedEnd = 0;
  private clock = 0;
  private cancelHandler?: (id: string, reason: string) => void;
  private readonly tick = { next: () => ++this.clock };
  /** When the store was made: its expiry times count from here (see `now`). */
  private readonly epoch = Date.now();
  /** One function for every task's status changes, not a closure per task. */
  private readonly onStatus = (task: TaskRecord): void => this.statusChanged(task as StoredTask);

  constructor(private readonly options: InMemoryTaskStoreOptions) {
    super();
  }

  create(init: NewTask): WrittenTask {
    // Kept once settled: a task with tools is not packed into one string then (its events went
    // into its log's open block as they left the hot ones, keeping the strings they already had:
    // no copy of its text at its end); a task without is compacted (see TaskRecord.compactSettled).
    // The fields one by one in a literal of one shape, not withFields' copy (Object.assign into an
    // empty object, past its in-object room: a property store grown per task, and a second object).
    // `satisfies`: a field NewTask gains and this list does not pass on is a compile error, not a silent drop.
    const task = new StoredTask({
      id: init.id,
      contextId: init.contextId,
      owner: init.owner,
      message: init.message,
      text: init.text,
      maxEvents: this.options.maxEventsPerTask,
      maxFinishedTools: this.options.maxFinishedToolsPerTask,
      onStatus: this.onStatus,
      keptWhenSettled: true,
    } satisfies { [K in keyof NewTask]-?: unknown } & Record<string, unknown>);
    if (this.pendingId === task.id) {
      task.claim = this.pendingKey;
      this.pendingId = this.pendingKey = undefined;
    } else {
      const claim = this.pendingClaims.get(task.id);
      if (claim !== undefined) {
        this.pendingClaims.delete(task.id);
        task.claim = claim;
      }
    }
    this.tasks.set(task.id, task);
    const context = this.contexts.get(task.contextId);
    if (context === undefined) this.contexts.set(task.contextId, task);
    else if (context instanceof StoredTask) this.contexts.set(task.contextId, [context, task]);
    else context.push(task);
    this.file(task);
    return task;
  }

  get(id: string): Promise<TaskView | undefined> {
    return Promise.resolve(this.tasks.get(id));
  }

  /** The record itself, for the embedded mode's callers (tests, metrics). */
  record(id: string): TaskRecord | undefined {
    return this.tasks.get(id);
  }

  /**
   * A page costs a binary search for the cursor plus the page: the owner's index (or its index
   * of one state) is kept in order. A contextId filter reads the conversation (at most
   * maxHistoryLength tasks); statusAfter stops at the first older task.
   */
  async list(owner: CallerId, query: ListTasksQuery): Promise<TaskPage> {
    const before = query.pageToken ? decodeCursor(query.pageToken) : undefined;
    const index = this.owners.get(owner);
    if (!index) return { tasks: [], nextPageToken: '', totalSize: 0 };
    if (query.contextId !== undefined) return this.listContext(owner, query, before);
    const source = query.state === undefined ? index.all : index.byState.get(query.state);
    if (!source) return { tasks: [], nextPageToken: '', totalSize: 0 };
    const page: TaskRecord[] = [];
    let lastKey = 0;
    let more = false;
    for (const { item, key } of source.newestFirst(before)) {
      if (query.statusAfter !== undefined && item.statusTime <= query.statusAfter) break;
      if (page.length === query.pageSize) {
        more = true;
        break;
      }
      page.push(item);
      lastKey = key;
    }
    const totalSize = query.statusAfter === undefined ? source.size : this.countAfter(source, query.statusAfter);
    return { tasks: page, nextPageToken: more ? encodeCursor(lastKey) : '', totalSize };
  }

  conversation(contextId: string, owner: CallerId): Promise<Conversation> {
    const tasks = this.contextTasks(contextId).filter((task) => task.owner === owner);
    const turns = tasks.flatMap((task) =>
      task.answerText === undefined
        ? []
        : [
            { role: 'user' as const, text: task.userText },
            { role: 'agent' as const, text: task.answerText },
          ],
    );
    return Promise.resolve({ tasks: tasks.length, turns });
  }

  claimMessage(owner: CallerId, messageId: string, taskId: string): string | undefined {
    const key = messageKey(owner, messageId);
    const earlier = this.messages.get(key);
    if (earlier !== undefined) return earlier;
    this.messages.set(key, taskId);
    if (this.pendingId === undefined) {
      this.pendingId = taskId;
      this.pendingKey = key;
    } else this.pendingClaims.set(taskId, key);
    return undefined;
  }

  releaseMessage(owner: CallerId, messageId: string, taskId: string): void {
    const key = messageKey(owner, messageId);
    if (this.messages.get(key) !== taskId) return;
    this.messages.delete(key);
    if (this.pendingId === taskId) this.pendingId = this.pendingKey = undefined;
    else this.pendingClaims.delete(taskId);
  }

  requestCancel(id: string, reason: string): Promise<void> {
    this.cancelHandler?.(id, reason);
    return Promise.resolve();
  }

  followersElsewhere(): Promise<number> {
    return Promise.resolve(0);
  }

  onCancelRequest(handler: (id: string, reason: string) => void): void {
    this.cancelHandler = handler;
  }

  expire(id: string, afterMs: number): void {
    const task = this.tasks.get(id);
    if (!task) return;
    this.queueExpiry(task, this.now() + afterMs);
    if (task.finishedBytes === undefined) {
      const bytes = task.bytes;
      task.finishedBytes = bytes;
      this.finishedCount += 1;
      this.finishedOrder[this.finishedEnd++] = id;
      this.finishedBytes += bytes;
      this.evictOldestFinished();
    }
  }

  size(): number {
    return this.tasks.size;
  }

  /** Finished tasks kept, and the bytes they hold (what maxRetainedTasks / maxRetainedBytes cap). */
  retained(): { tasks: number; bytes: number } {
    return { tasks: this.finishedCount, bytes: this.finishedBytes };
  }

  close(): Promise<void> {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    this.expiryTimerAt = Number.POSITIVE_INFINITY;
    for (const task of this.tasks.values()) task.expiresAt = undefined;
    this.expiring = 0;
    this.expiryIds = [];
    this.expiryAts = [];
    this.expiryHead = this.expiryEnd = 0;
    return Promise.resolve();
  }

  /** Queues a task's expiry (in order: TaskService expires every task after the same TTL, so this is an append). */
  private queueExpiry(task: StoredTask, at: number): void {
    const id = task.id;
    if (task.expiresAt === undefined) this.expiring += 1;
    task.expiresAt = at;
    const ids = this.expiryIds;
    const ats = this.expiryAts;
    const end = this.expiryEnd++;
    let lo = end;
    if (end > this.expiryHead && ats[end - 1] > at) {
      lo = this.expiryHead;
      let hi = end;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ats[mid] <= at) lo = mid + 1;
        else hi = mid;
      }
      for (let i = end; i > lo; i--) {
        ids[i] = ids[i - 1];
        ats[i] = ats[i - 1];
      }
    }
    ids[lo] = id;
    ats[lo] = at;
    this.compactExpiries();
    this.armExpiryTimer();
  }

  /**
   * Milliseconds since the store was made: a kept task's expiry time is then a small integer
   * held in its field for 24 days, where Date.now() + TTL was a heap number, one object more per
   * kept task for every mark-compact to mark.
   */
  private now(): number {
    return Date.now() - this.epoch;
  }

  /** Forgets the tasks whose time has come, then waits for the next one. */
  private expireDue(): void {
    this.expiryTimer = undefined;
    this.expiryTimerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    while (this.expiryHead < this.expiryEnd && this.expiryAts[this.expiryHead] <= now) {
      const id = this.expiryIds[this.expiryHead];
      const at = this.expiryAts[this.expiryHead++];
      const task = this.tasks.get(id);
      if (task?.expiresAt === at) this.forget(task);
    }
    this.compactExpiries();
    this.armExpiryTimer();
  }

  private armExpiryTimer(): void {
    if (this.expiryHead >= this.expiryEnd) return;
    const next = this.expiryAts[this.expiryHead];
    if (next >= this.expiryTimerAt) return;
    clearTimeout(this.expiryTimer);
    this.expiryTimerAt = next;
    this.expiryTimer = setTimeout(() => this.expireDue(), Math.max(0, next - this.now()));
    this.expiryTimer.unref();
  }

  /** Drops the entries already done or stale (tasks forgotten earlier) once they are most of the queue. */
  private compactExpiries(): void {
    if (!worthCompacting(this.expiryHead, this.expiryEnd, this.expiring)) return;
    const ids = this.expiryIds;
    const ats = this.expiryAts;
    let to = 0;
    for (let i = this.expiryHead; i < this.expiryEnd; i++) {
      if (this.tasks.get(ids[i])?.expiresAt !== ats[i]) continue;
      ids[to] = ids[i];
      ats[to] = ats[i];
      to += 1;
    }
    this.expiryEnd = compactInPlace(to, this.expiryEnd, ids, ats);
    this.expiryHead = 0;
  }

  private evictOldestFinished(): void {
    const order = this.finishedOrder;
    while (this.finishedCount > this.options.maxRetainedTasks || this.finishedBytes > this.options.maxRetainedBytes) {
      // Past the limits, a finished task is kept, and each kept finished task's id is in the order after the head.
      const task = this.tasks.get(order[this.finishedHead++]);
      if (task?.finishedBytes !== undefined) this.forget(task);
    }
    this.compactFinishedOrder();
  }

  /** Drops the ids already passed, or forgotten by their TTL, once they are most of the order. */
  private compactFinishedOrder(): void {
    if (!worthCompacting(this.finishedHead, this.finishedEnd, this.finishedCount)) return;
    const order = this.finishedOrder;
    let to = 0;
    for (let i = this.finishedHead; i < this.finishedEnd; i++) {
      if (this.tasks.get(order[i])?.finishedBytes !== undefined) order[to++] = order[i];
    }
    this.finishedEnd = compactInPlace(to, this.finishedEnd, order);
    this.finishedHead = 0;
  }

  /** Forgets a kept task: its entry, its claim, its place in its conversation and listings. */
  private forget(task: StoredTask): void {
    task.kept = false;
    if (task.expiresAt !== undefined) {
      task.expiresAt = undefined;
      this.expiring -= 1;
    }
    if (task.claim !== undefined && this.messages.get(task.claim) === task.id) this.messages.delete(task.claim);
    task.claim = undefined;
    if (task.finishedBytes !== undefined) {
      this.finishedCount -= 1;
      this.finishedBytes -= task.finishedBytes;
      task.finishedBytes = undefined;
    }
    this.tasks.delete(task.id);
    const context = this.contexts.get(task.contextId);
    if (context === task) this.contexts.delete(task.contextId);
    else if (Array.isArray(context)) {
      const at = context.indexOf(task);
      if (at >= 0) context.splice(at, 1);
      if (context.length === 1) this.contexts.set(task.contextId, context[0]);
    }
    this.unfile(task);
  }

  /** A conversation's tasks, oldest first (a new array for a conversation of one). */
  private contextTasks(contextId: string): StoredTask[] {
    const context = this.contexts.get(contextId);
    return context === undefined ? [] : context instanceof StoredTask ? [context] : context;
  }

  private statusChanged(task: StoredTask): void {
    if (task.kept) this.file(task);
  }

  /**
   * Files the task at the front of its owner's index and of its state's. A task filed already is
   * moved: touched again where it stays (its earlier place is emptied), removed only from the
   * index of a state it left. Not unfiled and filed again: that deleted and re-added it in maps
   * as large as the tasks kept, twice per task, and their deleted entries make them rehash.
   */
  private file(task: StoredTask): void {
    let index = this.owners.get(task.owner);
    if (!index) this.owners.set(task.owner, (index = { all: new RecencyIndex(this.tick, ALL_SLOTS), byState: new Map() }));
    index.all.touch(task);
    const filed = task.filedState;
    if (filed !== undefined && filed !== task.state) index.byState.get(filed)?.remove(task);
    let byState = index.byState.get(task.state);
    if (!byState) index.byState.set(task.state, (byState = new RecencyIndex(this.tick, STATE_SLOTS)));
    byState.touch(task);
    task.filedState = task.state;
  }

  private unfile(task: StoredTask): void {
    const index = this.owners.get(task.owner);
    const state = task.filedState;
    task.filedState = undefined;
    if (!index) return;
    index.all.remove(task);
    if (state !== undefined) {
      // An emptied state's index stays while its owner has tasks (a handful of states at most):
      // tasks pass through submitted and working one after another, each would make a new one.
      index.byState.get(state)?.remove(task);
    }
    if (index.all.size === 0) this.owners.delete(task.owner);
  }

  private countAfter(source: RecencyIndex<StoredTask>, statusAfter: number): number {
    let count = 0;
    for (const { item } of source.newestFirst()) {
      if (item.statusTime <= statusAfter) break;
      count += 1;
    }
    return count;
  }

  /** A conversation holds at most maxHistoryLength tasks per caller: sorting them is cheap. */
  private listContext(owner: CallerId, query: ListTasksQuery, before: number | undefined): TaskPage {
    const index = this.owners.get(owner);
    const keyed = this.contextTasks(query.contextId ?? '')
      .filter(
        (task) =>
          task.owner === owner &&
          (query.state === undefined || task.state === query.state) &&
          (query.statusAfter === undefined || task.statusTime > query.statusAfter),
      )
      .map((task) => ({ task, key: index?.all.keyOf(task) ?? 0 }))
      .sort((a, b) => b.key - a.key);
    const from = before === undefined ? 0 : keyed.findIndex((entry) => entry.key < before);
    const start = from < 0 ? keyed.length : from;
    const page = keyed.slice(start, start + query.pageSize);
    const more = start + page.length < keyed.length;
    return { tasks: page.map((entry) => entry.task), nextPageToken: more ? encodeCursor(page[page.length - 1].key) : '', totalSize: keyed.length };
  }
}

/** A page token: the index key of the last task of the previous page. */
function encodeCursor(key: number): string {
  return Buffer.from(JSON.stringify(['k', key])).toString('base64url');
}

function decodeCursor(token: string): number {
  try {
    const [tag, key] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (tag === 'k' && typeof key === 'number' && Number.isSafeInteger(key) && key > 0) return key;
  } catch {
    // falls through to the error below
  }
  throw invalidParams([{ field: 'pageToken', description: 'is not a page token this server issued' }]);
}

/**
 * One caller's message: the same messageId from another caller is another message. The owner
 * comes first with its length (no caller: no owner part), so no two pairs share a key; the JSON
 * of the pair did the same at several times the cost, once per send.
 */
function messageKey(owner: CallerId, messageId: string): string {
  // Joined flat: a kept task holds its claim, and a string of pieces is three objects instead of one.
  return owner === undefined ? joined('|', messageId) : joined(String(owner.length), ':', owner, '|', messageId);
}

/**
 * Ends a compaction in place: the live ids were moved to [0, live); the ids left past them (up
 * to the old end) are dropped, and the array keeps its length for the entries to come. New
 * arrays at each compaction, grown again by doubling, were allocated young, promoted (tens to
 * hundreds of kB each), and died at the next compaction. Returns the new end.
 */
function compactInPlace(live: number, end: number, ids: string[], times?: number[]): number {
  ids.fill('', live, end);
  // A queue that shrank for good gives its arrays back (trimmed where they are).
  const keep = Math.max(2048, 4 * live);
  if (ids.length > 2 * keep) {
    ids.length = keep;
    if (times) times.length = keep;
  }
  return live;
}

/**
 * Whether a queue kept as an array, a head and an end index is worth compacting: once the entries passed
 * (before `head`) are most of it, or the entries left are mostly stale (more than twice the `live` ones).
 */
function worthCompacting(head: number, length: number, live: number): boolean {
  const pending = length - head;
  return (head >= 1024 && head >= pending) || pending >= 2 * live + 1024;
}

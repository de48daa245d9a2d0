import { invalidParams } from '../a2a-errors';
import { TaskRecord, type CallerId } from '../task-record';
import { TaskStore, type Conversation, type ListTasksQuery, type NewTask, type TaskPage, type TaskView, type WrittenTask } from './task-store';

export interface InMemoryTaskStoreOptions {
  /** Events kept per task for replay. */
  maxEventsPerTask: number;
}

/** The embedded task store: every task in this process's memory, expired by timers. */
export class InMemoryTaskStore extends TaskStore {
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly contexts = new Map<string, Set<TaskRecord>>();
  private readonly expiries = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: InMemoryTaskStoreOptions) {
    super();
  }

  create(init: NewTask): Promise<WrittenTask> {
    const task = new TaskRecord({ ...init, maxEvents: this.options.maxEventsPerTask });
    this.tasks.set(task.id, task);
    let context = this.contexts.get(task.contextId);
    if (!context) this.contexts.set(task.contextId, (context = new Set()));
    context.add(task);
    return Promise.resolve(task);
  }

  get(id: string): Promise<TaskView | undefined> {
    return Promise.resolve(this.tasks.get(id));
  }

  /** The record itself, for the embedded mode's callers (tests, metrics). */
  record(id: string): TaskRecord | undefined {
    return this.tasks.get(id);
  }

  async list(owner: CallerId, query: ListTasksQuery): Promise<TaskPage> {
    const matching = [...this.tasks.values()]
      .filter(
        (task) =>
          task.owner === owner &&
          (query.contextId === undefined || task.contextId === query.contextId) &&
          (query.state === undefined || task.state === query.state) &&
          (query.statusAfter === undefined || task.statusTime > query.statusAfter),
      )
      .sort(byRecency);
    let from = 0;
    if (query.pageToken) {
      const cursor = decodeCursor(query.pageToken);
      from = matching.findIndex((task) => byRecency(task, cursor) > 0);
      if (from < 0) from = matching.length;
    }
    const page = matching.slice(from, from + query.pageSize);
    const last = page[page.length - 1];
    const more = from + page.length < matching.length;
    return { tasks: page, nextPageToken: more && last ? encodeCursor(last) : '', totalSize: matching.length };
  }

  conversation(contextId: string, owner: CallerId): Promise<Conversation> {
    const tasks = [...(this.contexts.get(contextId) ?? [])].filter((task) => task.owner === owner);
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

  expire(id: string, afterMs: number): void {
    clearTimeout(this.expiries.get(id));
    const timer = setTimeout(() => this.forget(id), afterMs);
    timer.unref();
    this.expiries.set(id, timer);
  }

  size(): number {
    return this.tasks.size;
  }

  close(): void {
    for (const timer of this.expiries.values()) clearTimeout(timer);
    this.expiries.clear();
  }

  private forget(id: string): void {
    this.expiries.delete(id);
    const task = this.tasks.get(id);
    if (!task) return;
    this.tasks.delete(id);
    const context = this.contexts.get(task.contextId);
    context?.delete(task);
    if (context?.size === 0) this.contexts.delete(task.contextId);
  }
}

/** Most recently updated first; ties by id, so the order (and the cursor) is total. */
function byRecency(a: { statusTime: number; id: string }, b: { statusTime: number; id: string }): number {
  return b.statusTime - a.statusTime || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function encodeCursor(task: { statusTime: number; id: string }): string {
  return Buffer.from(JSON.stringify([task.statusTime, task.id])).toString('base64url');
}

function decodeCursor(token: string): { statusTime: number; id: string } {
  try {
    const [statusTime, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof statusTime === 'number' && typeof id === 'string') return { statusTime, id };
  } catch {
    // falls through to the error below
  }
  throw invalidParams([{ field: 'pageToken', description: 'is not a page token this server issued' }]);
}

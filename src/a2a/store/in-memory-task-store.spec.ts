import { Role, TaskState, type Message } from '@a2a-js/sdk';
import { InMemoryTaskStore, type InMemoryTaskStoreOptions } from './in-memory-task-store';
import { RecencyIndex } from './recency-index';
import type { WrittenTask } from './task-store';

function message(id: string): Message {
  return {
    messageId: `m-${id}`,
    contextId: '',
    taskId: id,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: id }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const defaults: InMemoryTaskStoreOptions = { maxEventsPerTask: 100, maxFinishedToolsPerTask: 10, maxRetainedTasks: 1_000, maxRetainedBytes: 1 << 30 };

describe('InMemoryTaskStore', () => {
  let store: InMemoryTaskStore;
  let n = 0;
  const create = (owner?: string, contextId = `ctx-${++n}`): Promise<WrittenTask> =>
    Promise.resolve(store.create({ id: `t${++n}`, contextId, owner, message: message(`t${n}`), text: `t${n}` }));
  const finish = (task: WrittenTask): void => {
    task.complete('done');
    store.expire(task.id, 60_000);
  };

  beforeEach(() => (store = new InMemoryTaskStore(defaults)));
  afterEach(() => store.close());

  describe('retention of finished tasks', () => {
    it('forgets the oldest finished task first past maxRetainedTasks, never a running one', async () => {
      store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 3 });
      const running = await create();
      const done: WrittenTask[] = [];
      for (let i = 0; i < 5; i++) {
        const task = await create();
        finish(task);
        done.push(task);
      }
      expect(await store.get(done[0].id)).toBeUndefined();
      expect(await store.get(done[1].id)).toBeUndefined();
      for (const task of done.slice(2)) expect(await store.get(task.id)).toBe(task);
      expect(await store.get(running.id)).toBe(running);
      expect(store.retained().tasks).toBe(3);
      expect(store.size()).toBe(4);
    });

    it('forgets each finished task after its own TTL, in any order, one timer for all of them', async () => {
      jest.useFakeTimers();
      try {
        store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 10_000 });
        const ttls = [3_000, 1_000, 2_000, 1_000, 5_000];
        const tasks: WrittenTask[] = [];
        for (const ttl of ttls) {
          const task = await create();
          task.complete('done');
          store.expire(task.id, ttl);
          tasks.push(task);
        }
        // Expired again: the later time counts.
        store.expire(tasks[1].id, 4_000);
        expect(jest.getTimerCount()).toBe(1);
        const kept = async (): Promise<number[]> =>
          (await Promise.all(tasks.map((t) => store.get(t.id)))).flatMap((t, i) => (t ? [i] : []));
        jest.advanceTimersByTime(999);
        expect(await kept()).toEqual([0, 1, 2, 3, 4]);
        jest.advanceTimersByTime(1);
        expect(await kept()).toEqual([0, 1, 2, 4]);
        jest.advanceTimersByTime(1_000);
        expect(await kept()).toEqual([0, 1, 4]);
        jest.advanceTimersByTime(1_000);
        expect(await kept()).toEqual([1, 4]);
        jest.advanceTimersByTime(1_000);
        expect(await kept()).toEqual([4]);
        jest.advanceTimersByTime(1_000);
        expect(await kept()).toEqual([]);
        expect(jest.getTimerCount()).toBe(0);
        expect(store.retained()).toEqual({ tasks: 0, bytes: 0 });
      } finally {
        jest.useRealTimers();
      }
    });

    it('keeps its expiry queue bounded when tasks are forgotten before their TTL (maxRetainedTasks)', async () => {
      jest.useFakeTimers();
      try {
        store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 10 });
        for (let i = 0; i < 2_000; i++) {
          const task = await create();
          task.complete('done');
          store.expire(task.id, 60_000);
        }
        expect(store.retained().tasks).toBe(10);
        // Compacted in place, the queue's array keeps the length it peaked at: twice the tasks
        // queued (the ten kept and the one finishing) plus 1,024 stale entries at most.
        const queue = (store as unknown as { expiryIds: unknown[] }).expiryIds;
        expect(queue.length).toBeLessThanOrEqual(2 * 11 + 1_024);
        jest.advanceTimersByTime(60_000);
        expect(store.size()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });

    it('evicts in finishing order past tasks its TTL forgot, and keeps that order bounded when only TTLs forget', async () => {
      jest.useFakeTimers();
      try {
        store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 3 });
        const short: WrittenTask[] = [];
        const long: WrittenTask[] = [];
        // Finishing order: s0 l0 s1 l1 s2 l2; the short ones leave by their TTL.
        for (let i = 0; i < 3; i++) {
          for (const [list, ttl] of [[short, 1_000], [long, 60_000]] as const) {
            const task = await create();
            task.complete('done');
            store.expire(task.id, ttl);
            list.push(task);
          }
        }
        // Six finished past a limit of three: s0 l0 s1 went first, oldest first.
        expect(await store.get(short[0].id)).toBeUndefined();
        expect(await store.get(long[0].id)).toBeUndefined();
        expect(await store.get(short[1].id)).toBeUndefined();
        jest.advanceTimersByTime(1_000);
        expect(await store.get(short[2].id)).toBeUndefined();
        expect(store.retained().tasks).toBe(2);
        // Two more: the oldest still kept (l1) is the one evicted, not an id forgotten already.
        for (let i = 0; i < 2; i++) finish(await create());
        expect(await store.get(long[1].id)).toBeUndefined();
        expect(await store.get(long[2].id)).toBe(long[2]);
        expect(store.retained().tasks).toBe(3);

        // Under the limit, TTLs alone forget: what the store remembers of the order stays bounded.
        store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 10_000 });
        for (let i = 0; i < 5_000; i++) {
          const task = await create();
          task.complete('done');
          store.expire(task.id, 10);
          jest.advanceTimersByTime(10);
        }
        expect(store.retained().tasks).toBeLessThanOrEqual(1);
        expect((store as unknown as { finishedOrder: unknown[] }).finishedOrder.length).toBeLessThanOrEqual(2 * 1 + 1_024);
      } finally {
        jest.useRealTimers();
      }
    });

    it('forgets the oldest finished tasks first past maxRetainedBytes', async () => {
      const probe = await create();
      for (let i = 0; i < 20; i++) probe.narrate('x'.repeat(1_000));
      finish(probe);
      const perTask = store.retained().bytes;
      expect(perTask).toBeGreaterThan(20_000);
      store = new InMemoryTaskStore({ ...defaults, maxRetainedBytes: Math.floor(perTask * 2.5) });
      const tasks: WrittenTask[] = [];
      for (let i = 0; i < 4; i++) {
        const task = await create();
        for (let k = 0; k < 20; k++) task.narrate('x'.repeat(1_000));
        finish(task);
        tasks.push(task);
      }
      expect(await store.get(tasks[0].id)).toBeUndefined();
      expect(await store.get(tasks[1].id)).toBeUndefined();
      expect(await store.get(tasks[2].id)).toBeDefined();
      expect(await store.get(tasks[3].id)).toBeDefined();
      expect(store.retained().bytes).toBeLessThanOrEqual(Math.floor(perTask * 2.5));
    });

    it('takes a forgotten task out of its listing and its conversation', async () => {
      store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 1 });
      const first = await create('alice', 'ctx');
      finish(first);
      const second = await create('alice', 'ctx');
      finish(second);
      expect((await store.list('alice', { pageSize: 10 })).tasks).toEqual([second]);
      expect((await store.conversation('ctx', 'alice')).tasks).toBe(1);
    });

    it('keeps a conversation right as its tasks come and go in any order (one task, then several, then one again)', async () => {
      store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 2 });
      const inContext = async (owner: string): Promise<WrittenTask[]> => (await store.list(owner, { pageSize: 10, contextId: 'ctx' })).tasks as WrittenTask[];
      const a = await create('alice', 'ctx');
      expect(await inContext('alice')).toEqual([a]);
      const b = await create('alice', 'ctx');
      const c = await create('alice', 'ctx');
      const d = await create('bob', 'ctx');
      finish(b);
      finish(a);
      expect((await store.conversation('ctx', 'alice')).tasks).toBe(3);
      finish(await create('alice', 'elsewhere'));
      expect(await store.get(b.id)).toBeUndefined();
      expect(await inContext('alice')).toEqual([a, c]);
      finish(c);
      finish(d);
      expect(await store.get(a.id)).toBeUndefined();
      expect(await inContext('alice')).toEqual([c]);
      expect(await inContext('bob')).toEqual([d]);
      expect((await store.conversation('ctx', 'alice')).turns.map((turn) => turn.text)).toEqual([c.id, 'done']);
      const e = await create('alice', 'ctx');
      expect(await inContext('alice')).toEqual([e, c]);
      finish(e);
      finish(await create('alice', 'elsewhere'));
      expect(await inContext('alice')).toEqual([e]);
      expect(await inContext('bob')).toEqual([]);
    });

    it("forgets a task's message claim with the task, and a claim given back before its task existed", async () => {
      store = new InMemoryTaskStore({ ...defaults, maxRetainedTasks: 1 });
      expect(await store.claimMessage('alice', 'm-1', 't-claimed')).toBeUndefined();
      const claimed = await store.create({ id: 't-claimed', contextId: 'c1', owner: 'alice', message: message('t-claimed'), text: 'x' });
      expect(await store.claimMessage('alice', 'm-1', 'other')).toBe('t-claimed');
      finish(claimed);
      // Evicted by the next finished task: its claim goes with it, so the message is new again.
      finish(await create('alice'));
      expect(await store.get('t-claimed')).toBeUndefined();
      expect(await store.claimMessage('alice', 'm-1', 't-again')).toBeUndefined();
      // Given back (its admission failed): a task created later under that id takes no claim.
      store.releaseMessage('alice', 'm-1', 't-again');
      const unclaimed = await store.create({ id: 't-again', contextId: 'c2', owner: 'alice', message: message('t-again'), text: 'x' });
      expect(await store.claimMessage('alice', 'm-1', 't-third')).toBeUndefined();
      finish(unclaimed);
      finish(await create('alice'));
      // Forgetting the unclaimed task left the third claim alone.
      expect(await store.claimMessage('alice', 'm-1', 'another')).toBe('t-third');
    });
  });

  describe('message claims', () => {
    it('tells apart pairs of caller and messageId whose texts run together', async () => {
      const pairs: Array<[string | undefined, string]> = [
        ['a|b', 'c'],
        ['a', 'b|c'],
        ['1:a', 'b'],
        [undefined, '1:a|b'],
        ['', '|x'],
        [undefined, 'x'],
        ['', 'x'],
        ['0:', 'x'],
        ['["a"', '"b"]'],
        ['a', 'b'],
      ];
      for (const [i, [owner, messageId]] of pairs.entries()) expect(await store.claimMessage(owner, messageId, `t${i}`)).toBeUndefined();
      for (const [i, [owner, messageId]] of pairs.entries()) expect(await store.claimMessage(owner, messageId, 'again')).toBe(`t${i}`);
    });
  });

  describe('ListTasks index', () => {
    it('pages through 2,000 tasks newest first (a status change moves a task to the front)', async () => {
      const tasks: WrittenTask[] = [];
      for (let i = 0; i < 2_000; i++) tasks.push(await create('alice'));
      for (let i = 0; i < 2_000; i += 7) tasks[i].narrate('moved to the front');
      const expected = [...tasks].reverse();
      const moved = tasks.filter((_, i) => i % 7 === 0).reverse();
      const order = [...moved, ...expected.filter((t) => !moved.includes(t))];
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await store.list('alice', { pageSize: 100, pageToken: token });
        expect(page.totalSize).toBe(2_000);
        seen.push(...page.tasks.map((t) => t.id));
        token = page.nextPageToken || undefined;
        pages += 1;
      } while (token);
      expect(pages).toBe(20);
      expect(seen).toEqual(order.map((t) => t.id));
    });

    it('reads a page without walking the other tasks', async () => {
      for (let i = 0; i < 5_000; i++) await create('bob');
      const visited = countVisits();
      const page = await store.list('bob', { pageSize: 10 });
      expect(page.tasks).toHaveLength(10);
      expect(visited()).toBe(11);
      const next = countVisits();
      await store.list('bob', { pageSize: 10, pageToken: page.nextPageToken });
      expect(next()).toBe(11);
    });

    it('filters by state from its own index, with the total of that state', async () => {
      const tasks: WrittenTask[] = [];
      for (let i = 0; i < 50; i++) tasks.push(await create('carol'));
      for (let i = 0; i < 50; i += 10) finish(tasks[i]);
      const visited = countVisits();
      const page = await store.list('carol', { pageSize: 3, state: TaskState.TASK_STATE_COMPLETED });
      expect(page.tasks.map((t) => t.id)).toEqual([tasks[40].id, tasks[30].id, tasks[20].id]);
      expect(page.totalSize).toBe(5);
      expect(visited()).toBe(4);
      const rest = await store.list('carol', { pageSize: 3, state: TaskState.TASK_STATE_COMPLETED, pageToken: page.nextPageToken });
      expect(rest.tasks.map((t) => t.id)).toEqual([tasks[10].id, tasks[0].id]);
      expect(rest.nextPageToken).toBe('');
      expect((await store.list('carol', { pageSize: 100, state: TaskState.TASK_STATE_SUBMITTED })).totalSize).toBe(45);
    });

    it('keeps callers apart', async () => {
      await create('dave');
      expect((await store.list('erin', { pageSize: 10 })).tasks).toEqual([]);
      expect((await store.list(undefined, { pageSize: 10 })).totalSize).toBe(0);
    });
  });

  describe('RecencyIndex', () => {
    it('agrees with a naive model over random touches and removals (compaction included)', () => {
      let clock = 0;
      const index = new RecencyIndex<number>({ next: () => ++clock });
      let model: number[] = [];
      let seed = 7;
      const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      for (let step = 0; step < 20_000; step++) {
        const item = Math.floor(random() * 300);
        if (random() < 0.2) {
          index.remove(item);
          model = model.filter((x) => x !== item);
        } else {
          index.touch(item);
          model = [item, ...model.filter((x) => x !== item)];
        }
      }
      expect([...index.newestFirst()].map((e) => e.item)).toEqual(model);
      expect(index.size).toBe(model.length);
      const cursor = index.keyOf(model[10])!;
      expect([...index.newestFirst(cursor)].map((e) => e.item)).toEqual(model.slice(11));
    });

    it('compacts in place, and gives its arrays back once it holds far fewer items', () => {
      let clock = 0;
      const index = new RecencyIndex<{ id: number }>({ next: () => ++clock });
      const items = Array.from({ length: 5_000 }, (_, id) => ({ id }));
      for (const item of items) index.touch(item);
      const arrays = index as unknown as { items: unknown[]; stamps: number[] };
      const [itemsArray, stampsArray] = [arrays.items, arrays.stamps];
      // Touching the same items again and again compacts many times, always into the same arrays.
      for (let round = 0; round < 10; round++) for (const item of items) index.touch(item);
      expect(arrays.items).toBe(itemsArray);
      expect(arrays.stamps).toBe(stampsArray);
      expect(arrays.items.length).toBeLessThanOrEqual(2 * 5_000 + 1);
      expect([...index.newestFirst()].map((e) => e.item)).toEqual([...items].reverse());
      // All but ten removed: the compactions on the way trim the arrays (to four times the live
      // items at most; compaction stops under 1,024 slots), and what is left still reads right.
      for (const item of items.slice(10)) index.remove(item);
      expect(index.size).toBe(10);
      expect(arrays.items.length).toBeLessThanOrEqual(4 * 1_024);
      expect(arrays.stamps.length).toBe(arrays.items.length);
      expect(arrays.items.filter((slot) => slot !== undefined)).toHaveLength(10);
      expect([...index.newestFirst()].map((e) => e.item)).toEqual(items.slice(0, 10).reverse());
      const cursor = index.keyOf(items[5])!;
      expect([...index.newestFirst(cursor)].map((e) => e.item)).toEqual(items.slice(0, 5).reverse());
    });

    it('holds no reference to an item it no longer lists, before any compaction (a forgotten task is not kept alive)', () => {
      let clock = 0;
      const index = new RecencyIndex<{ id: number }>({ next: () => ++clock });
      const items = Array.from({ length: 100 }, (_, id) => ({ id }));
      // Each touched three times (moves), then half of them removed: far under the 1,024 entries compaction waits for.
      for (let round = 0; round < 3; round++) for (const item of items) index.touch(item);
      const removed = items.filter((item) => item.id % 2 === 0);
      for (const item of removed) index.remove(item);
      const slots = (index as unknown as { items: unknown[] }).items;
      expect(slots.length).toBe(300);
      for (const item of removed) expect(slots.includes(item)).toBe(false);
      // Every kept item is in exactly one slot: its current one.
      for (const item of items.filter((i) => i.id % 2 === 1)) expect(slots.filter((slot) => slot === item)).toHaveLength(1);
      expect([...index.newestFirst()].map((e) => e.item.id)).toEqual(items.filter((i) => i.id % 2 === 1).map((i) => i.id).reverse());
    });
  });
});

/** Counts the entries ListTasks reads from the index until the returned function is called. */
function countVisits(): () => number {
  const original = RecencyIndex.prototype.newestFirst;
  let visits = 0;
  const spy = jest.spyOn(RecencyIndex.prototype, 'newestFirst').mockImplementation(function* (this: RecencyIndex<unknown>, before?: number) {
    for (const entry of original.call(this, before)) {
      visits += 1;
      yield entry;
    }
  });
  return () => {
    spy.mockRestore();
    return visits;
  };
}

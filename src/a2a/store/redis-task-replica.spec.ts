import { TaskState, type Task } from '@a2a-js/sdk';
import { TaskEvent } from '../task-event';
import type { TaskListener } from '../task-record';
import { RedisTaskReplica, type RedisTaskStore } from './redis-task-store';

const task = (id: string): Task => ({ id, contextId: 'ctx', history: [], artifacts: [], metadata: undefined, status: undefined });

const head = (lastSeq: number, newestSeq: number, firstSeq: number) => ({
  id: 't1',
  contextId: 'ctx',
  owner: undefined,
  state: TaskState.TASK_STATE_WORKING,
  statusTime: 0,
  lastSeq,
  newestSeq,
  firstSeq,
  snapshot: task('t1'),
});

/**
 * A follower of a task on another instance, behind what Redis keeps, whose stored snapshot is not
 * newer than its place: it waits for the writer's next batch, which stores a newer one. That
 * batch's PUBLISH can be handled while the follower is still reading the head (the two replies
 * come on different connections): the follower must still go on from the newer snapshot.
 */
describe('RedisTaskReplica: a follower waiting for a newer snapshot', () => {
  it('goes on when the batch that stores it is published while the stale head is being read', async () => {
    // Redis keeps events 30-40 of the stream; the stored snapshot is event 2 until the batch.
    const kept = Array.from({ length: 11 }, (_, i) => new TaskEvent(30 + i, '{"statusUpdate":{}}'));
    let stored = head(2, 40, 30);
    let headReads = 0;
    const store = {
      maxEventsPerTask: 20,
      watch: () => undefined,
      unwatch: () => undefined,
      countFollower: () => undefined,
      read: async (_id: string, after: number) => kept.filter((event) => event.seq > after),
      restartPoint: async (_id: string, cursor: number) => {
        headReads++;
        const read = stored;
        if (headReads === 1) {
          // Redis answered the head as it was; the batch ran next, and its PUBLISH is handled first.
          stored = head(41, 41, 30);
          replica.advance(41, TaskState.TASK_STATE_WORKING);
        }
        await Promise.resolve();
        return read.lastSeq <= cursor ? ('later' as const) : { head: read, farBehind: false };
      },
    };
    const replica = new RedisTaskReplica(store as unknown as RedisTaskStore, head(2, 40, 30));
    const received: number[] = [];
    const listener: TaskListener = { cursor: 2, push: (event) => received.push(event.seq), overrun: () => received.push(-1) };
    replica.follow(listener);
    for (let i = 0; i < 20 && received.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
    // The newer snapshot (event 41), read on the pump's second pass.
    expect(received).toEqual([41]);
    expect(headReads).toBe(2);
    expect(listener.cursor).toBe(41);
  });
});

/**
 * A follower takes the events the replica keeps (the tail) at once, and reads from the stream only
 * what the tail lacks; a follower that stops taking events goes on from its place when it resumes.
 */
describe('RedisTaskReplica: the tail and the stream', () => {
  const event = (seq: number) => new TaskEvent(seq, '{"statusUpdate":{}}');

  it('reads what the tail lacks from the stream, then takes published batches from the tail, in order', async () => {
    const reads: number[] = [];
    const store = {
      maxEventsPerTask: 100,
      watch: () => undefined,
      unwatch: () => undefined,
      countFollower: () => undefined,
      read: async (_id: string, after: number) => {
        reads.push(after);
        await Promise.resolve();
        return [3, 4, 5].filter((seq) => seq > after).map(event);
      },
      restartPoint: async () => undefined,
    };
    const replica = new RedisTaskReplica(store as unknown as RedisTaskStore, head(2, 5, 1));
    const received: number[] = [];
    const listener: TaskListener = { cursor: 2, push: (e) => received.push(e.seq), overrun: () => received.push(-1) };
    replica.follow(listener);
    // Events 3-5 are in the stream only: the pump reads them (a batch published meanwhile waits its turn).
    replica.advance(6, TaskState.TASK_STATE_WORKING, [event(6)]);
    for (let i = 0; i < 20 && received.length < 4; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(received).toEqual([3, 4, 5, 6]);
    // The next batches come from the tail, handed over within advance: no read.
    const readsBefore = reads.length;
    replica.advance(8, TaskState.TASK_STATE_WORKING, [event(7), event(8)]);
    expect(received).toEqual([3, 4, 5, 6, 7, 8]);
    expect(reads.length).toBe(readsBefore);
    expect(listener.cursor).toBe(8);
  });

  it('holds a follower that takes nothing at its place, and goes on from there on resume', () => {
    const store = {
      maxEventsPerTask: 100,
      watch: () => undefined,
      unwatch: () => undefined,
      countFollower: () => undefined,
      read: async () => {
        throw new Error('not read: the tail has every event');
      },
      restartPoint: async () => undefined,
    };
    const replica = new RedisTaskReplica(store as unknown as RedisTaskStore, head(0, 0, 1));
    const received: number[] = [];
    let room = 2;
    const listener: TaskListener = {
      cursor: 0,
      push: (e) => {
        received.push(e.seq);
        room--;
      },
      ready: () => room > 0,
      overrun: () => received.push(-1),
    };
    replica.follow(listener);
    replica.advance(3, TaskState.TASK_STATE_WORKING, [event(1), event(2), event(3)]);
    expect(received).toEqual([1, 2]);
    replica.advance(4, TaskState.TASK_STATE_WORKING, [event(4)]);
    expect(received).toEqual([1, 2]);
    room = 10;
    replica.resume(listener);
    expect(received).toEqual([1, 2, 3, 4]);
    // The task ends: the last event reaches it, and the listener stays until it leaves.
    replica.advance(5, TaskState.TASK_STATE_COMPLETED, [new TaskEvent(5, '{"statusUpdate":{}}', false, true)]);
    expect(received).toEqual([1, 2, 3, 4, 5]);
    expect(replica.isTerminal).toBe(true);
  });
});

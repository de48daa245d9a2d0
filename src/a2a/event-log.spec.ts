import fc from 'fast-check';
import { EventBlock, EventLog, OpenEventBlock, type EventPacking } from './event-log';
import { OpenTaskEventBlock, TASK_EVENT_PACKING, TaskEvent, TaskEventBlock, ToolFrameEvent, toolCallIdText, toolFrameHead } from './task-event';

/** Numbers packed into a block: a copy of them, read back by sequence number. */
class NumberBlock extends EventBlock<number> {
  constructor(
    private readonly values: readonly number[],
    firstSeq: number,
  ) {
    super(firstSeq, values.length);
  }

  get(seq: number): number {
    return this.values[seq - this.firstSeq];
  }

  weight(seq: number): number {
    return this.get(seq) % 10;
  }
}

const packing = (hot: number, block: number, packed: NumberBlock[] = [], blockWeight?: number): EventPacking<number> => ({
  hot,
  block,
  blockWeight,
  pack: (events, firstSeq) => {
    const made = new NumberBlock([...events], firstSeq);
    packed.push(made);
    return made;
  },
});

/** Numbers added one at a time, closed into a NumberBlock; records what it was made and closed as. */
class OpenNumberBlock extends OpenEventBlock<number> {
  addedWeight = 0;
  private values: number[] = [];
  fitted = false;

  constructor(
    firstSeq: number,
    private readonly closed: NumberBlock[],
  ) {
    super(firstSeq, 0);
  }

  add(event: number): void {
    this.values.push(event);
    this.count += 1;
    this.addedWeight += event % 10;
  }

  get(seq: number): number {
    return this.values[seq - this.firstSeq];
  }

  weight(seq: number): number {
    return this.get(seq) % 10;
  }

  close(): NumberBlock {
    const block = new NumberBlock(this.values, this.firstSeq);
    this.closed.push(block);
    return block;
  }

  fit(): void {
    this.fitted = true;
  }
}

const openPacking = (hot: number, block: number, opened: OpenNumberBlock[] = [], closed: NumberBlock[] = [], blockWeight?: number): EventPacking<number> => ({
  ...packing(hot, block, [], blockWeight),
  open: (firstSeq) => {
    const made = new OpenNumberBlock(firstSeq, closed);
    opened.push(made);
    return made;
  },
});

describe('EventLog', () => {
  it('numbers events from 1 and reads them back by sequence number', () => {
    const log = new EventLog<string>(10);
    expect(log.lastSeq).toBe(0);
    expect(log.firstSeq).toBe(1);
    expect(log.nextSeq).toBe(1);
    log.append('e1');
    log.append('e2');
    expect(log.lastSeq).toBe(2);
    expect(log.get(1)).toBe('e1');
    expect(log.get(2)).toBe('e2');
    expect(log.get(0)).toBeUndefined();
    expect(log.get(3)).toBeUndefined();
    expect(log.get(1.5)).toBeUndefined();
  });

  it('keeps only the newest `capacity` events and says from where it can replay', () => {
    const log = new EventLog<number>(3);
    for (let i = 0; i < 5; i++) log.append(log.nextSeq);
    expect(log.size).toBe(3);
    expect(log.firstSeq).toBe(3);
    expect(log.lastSeq).toBe(5);
    expect(log.get(2)).toBeUndefined();
    expect(log.get(3)).toBe(3);
    expect(log.retainsAfter(2)).toBe(true);
    expect(log.retainsAfter(1)).toBe(false);
    expect(log.retainsAfter(5)).toBe(true);
  });

  it('keeps the events after `keepAfter` beyond capacity (up to twice it), and trims them once released', () => {
    const log = new EventLog<number>(3);
    for (let i = 0; i < 6; i++) log.append(log.nextSeq, 0);
    expect(log.size).toBe(6);
    expect(log.retainsAfter(0)).toBe(true);
    log.append(log.nextSeq, 0);
    expect([log.size, log.firstSeq]).toEqual([6, 2]);
    log.trim(3);
    expect(log.firstSeq).toBe(4);
    log.trim();
    expect([log.firstSeq, log.lastSeq]).toEqual([5, 7]);
  });

  it('agrees with a naive model over any sequence of appends (compaction included)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 5000 }), (capacity, count) => {
        const log = new EventLog<number>(capacity);
        for (let i = 1; i <= count; i++) log.append(log.nextSeq * 7);
        const first = Math.max(1, count - capacity + 1);
        expect(log.lastSeq).toBe(count);
        expect(log.firstSeq).toBe(count === 0 ? 1 : first);
        for (let seq = first; seq <= count; seq++) expect(log.get(seq)).toBe(seq * 7);
        if (first > 1) expect(log.get(first - 1)).toBeUndefined();
      }),
      { numRuns: 60 },
    );
  });

  it('packs the events older than the hot ones in blocks, and all of them on pack(), reading the same', () => {
    const blocks: NumberBlock[] = [];
    const log = new EventLog<number>(1_000, undefined, 1, packing(4, 8, blocks));
    for (let i = 1; i <= 30; i++) log.append(i * 3);
    // 30 events, the newest 4 (at least) as they are: blocks of 8 hold 1-8, 9-16 and 17-24.
    expect(blocks.map((b) => [b.firstSeq, b.count])).toEqual([
      [1, 8],
      [9, 8],
      [17, 8],
    ]);
    log.pack();
    expect(blocks.map((b) => [b.firstSeq, b.count])).toEqual([
      [1, 8],
      [9, 8],
      [17, 8],
      [25, 6],
    ]);
    for (let seq = 1; seq <= 30; seq++) expect(log.get(seq)).toBe(seq * 3);
    log.pack();
    expect(blocks).toHaveLength(4);
  });

  it('packs by weight too: the events older than the hot ones, once they weigh blockWeight', () => {
    const blocks: NumberBlock[] = [];
    // Each event weighs its value: 10 each; the 2 newest stay as they are.
    const log = new EventLog<number>(1_000, (n) => n, 1, packing(2, 100, blocks, 35));
    for (let i = 0; i < 6; i++) log.append(10);
    // After the 6th append, events 1-4 wait (40 >= 35): one block of 4.
    expect(blocks.map((b) => [b.firstSeq, b.count])).toEqual([[1, 4]]);
    expect(log.bytes).toBe(60);
    for (let seq = 1; seq <= 6; seq++) expect(log.get(seq)).toBe(10);
  });

  it('with an open block, moves each event leaving the hot ones into it at once, closes it when full, and fit() moves the rest', () => {
    const opened: OpenNumberBlock[] = [];
    const closed: NumberBlock[] = [];
    const log = new EventLog<number>(1_000, (n) => n % 10, 1, openPacking(4, 8, opened, closed));
    for (let i = 1; i <= 4; i++) log.append(i * 3);
    // No more than the hot ones: no block.
    expect(opened).toHaveLength(0);
    for (let i = 5; i <= 14; i++) log.append(i * 3);
    // 14 events: 1-8 in a closed block, 9 and 10 in the open one, the newest 4 as they are.
    expect(opened.map((b) => [b.firstSeq, b.count])).toEqual([
      [1, 8],
      [9, 2],
    ]);
    expect(closed.map((b) => [b.firstSeq, b.count])).toEqual([[1, 8]]);
    log.fit();
    expect(opened.map((b) => [b.firstSeq, b.count, b.fitted])).toEqual([
      [1, 8, false],
      [9, 6, true],
    ]);
    expect(closed).toHaveLength(1);
    for (let seq = 1; seq <= 14; seq++) expect(log.get(seq)).toBe(seq * 3);
    expect(log.bytes).toBe([...Array(14).keys()].reduce((sum, i) => sum + (((i + 1) * 3) % 10), 0));
    log.pack();
    expect(closed.map((b) => [b.firstSeq, b.count])).toEqual([
      [1, 8],
      [9, 6],
    ]);
    for (let seq = 1; seq <= 14; seq++) expect(log.get(seq)).toBe(seq * 3);
  });

  it('cool() moves the hot events into the open block too, and the log reads the same however often it is cooled', () => {
    const opened: OpenNumberBlock[] = [];
    const closed: NumberBlock[] = [];
    const log = new EventLog<number>(1_000, (n) => n % 10, 1, openPacking(4, 8, opened, closed));
    for (let i = 1; i <= 3; i++) log.append(i * 3);
    log.cool();
    expect(opened.map((b) => [b.firstSeq, b.count])).toEqual([[1, 3]]);
    // Cooled after every append, past the tail's compaction (every 16) and two closed blocks.
    for (let i = 4; i <= 40; i++) {
      log.append(i * 3);
      log.cool();
      expect(opened[opened.length - 1].count).toBe(((i - 1) % 8) + 1);
    }
    expect(closed.map((b) => [b.firstSeq, b.count])).toEqual([
      [1, 8],
      [9, 8],
      [17, 8],
      [25, 8],
      [33, 8],
    ]);
    for (let seq = 1; seq <= 40; seq++) expect(log.get(seq)).toBe(seq * 3);
    expect(log.bytes).toBe([...Array(40).keys()].reduce((sum, i) => sum + (((i + 1) * 3) % 10), 0));
    // Without an open block to cool into, it keeps its events as they are.
    const plain = new EventLog<number>(1_000, undefined, 1, packing(4, 8));
    for (let i = 1; i <= 3; i++) plain.append(i);
    plain.cool();
    expect([1, 2, 3].map((seq) => plain.get(seq))).toEqual([1, 2, 3]);
  });

  it('appendCooled() appends straight into the open block as append() then cool() would, and declines while events wait in the tail', () => {
    const opened: OpenNumberBlock[] = [];
    const closed: NumberBlock[] = [];
    const log = new EventLog<number>(12, (n) => n % 10, 1, openPacking(4, 8, opened, closed));
    const twin = new EventLog<number>(12, (n) => n % 10, 1, openPacking(4, 8));
    for (let i = 1; i <= 3; i++) {
      log.append(i * 3);
      twin.append(i * 3);
    }
    // Three events wait in the tail: it appends nothing.
    expect(log.appendCooled(12)).toBe(false);
    expect(log.lastSeq).toBe(3);
    log.cool();
    twin.cool();
    // Past a closed block and the capacity (events leave by trim, some kept by keepAfter).
    for (let i = 4; i <= 30; i++) {
      const keepAfter = i % 5 === 0 ? i - 14 : undefined;
      expect(log.appendCooled(i * 3, keepAfter)).toBe(true);
      twin.append(i * 3, keepAfter);
      twin.cool();
      expect([log.firstSeq, log.lastSeq, log.bytes]).toEqual([twin.firstSeq, twin.lastSeq, twin.bytes]);
    }
    for (let seq = 0; seq <= 31; seq++) expect(log.get(seq)).toBe(twin.get(seq));
    expect(opened[opened.length - 1].count).toBeGreaterThan(0);
    expect(closed.length).toBeGreaterThan(0);
    // A log without an open block, or one that keeps no more than the hot ones, declines.
    expect(new EventLog<number>(12, undefined, 1, packing(4, 8)).appendCooled(1)).toBe(false);
    expect(new EventLog<number>(4, undefined, 1, openPacking(4, 8)).appendCooled(1)).toBe(false);
  });

  it('cool() opens no block in a log that keeps no more events than the hot ones (they leave by trim)', () => {
    const opened: OpenNumberBlock[] = [];
    const log = new EventLog<number>(1, undefined, 1, openPacking(4, 8, opened));
    for (let i = 1; i <= 20; i++) {
      log.append(i);
      log.cool();
      expect(log.get(i)).toBe(i);
    }
    expect(opened).toHaveLength(0);
    expect([log.firstSeq, log.lastSeq]).toEqual([20, 20]);
  });

  it('with an open block, a log that opened none keeps its events as they are on fit()', () => {
    const opened: OpenNumberBlock[] = [];
    const log = new EventLog<number>(1_000, undefined, 1, openPacking(4, 8, opened));
    for (let i = 1; i <= 4; i++) log.append(i);
    log.fit();
    expect(opened).toHaveLength(0);
    expect([1, 2, 3, 4].map((seq) => log.get(seq))).toEqual([1, 2, 3, 4]);
  });

  it('with packing, agrees with a naive model over any appends, holds, trims and packs (weights included)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('append' as const), keepAfter: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }) }),
      fc.record({ kind: fc.constant('trim' as const), keepAfter: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }) }),
      fc.record({ kind: fc.constant('pack' as const) }),
      fc.record({ kind: fc.constant('fit' as const) }),
      fc.record({ kind: fc.constant('cool' as const) }),
      fc.record({ kind: fc.constant('appendCooled' as const), keepAfter: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
        fc.array(op, { maxLength: 300 }),
        fc.boolean(),
        (capacity, hot, block, firstSeq, blockWeight, ops, open) => {
          const weigh = (n: number): number => n % 10;
          const log = new EventLog<number>(capacity, weigh, firstSeq, open ? openPacking(hot, block, [], [], blockWeight) : packing(hot, block, [], blockWeight));
          const plain = new EventLog<number>(capacity, weigh, firstSeq);
          for (const o of ops) {
            if (o.kind === 'append') {
              log.append(log.nextSeq * 7, o.keepAfter);
              plain.append(plain.nextSeq * 7, o.keepAfter);
            } else if (o.kind === 'trim') {
              log.trim(o.keepAfter);
              plain.trim(o.keepAfter);
            } else if (o.kind === 'fit') log.fit();
            else if (o.kind === 'cool') log.cool();
            else if (o.kind === 'appendCooled') {
              // Where it declines (nothing appended), the caller appends as usual.
              if (!log.appendCooled(log.nextSeq * 7, o.keepAfter)) log.append(log.nextSeq * 7, o.keepAfter);
              plain.append(plain.nextSeq * 7, o.keepAfter);
            } else log.pack();
            expect([log.firstSeq, log.lastSeq, log.size, log.bytes]).toEqual([plain.firstSeq, plain.lastSeq, plain.size, plain.bytes]);
          }
          for (let seq = firstSeq - 1; seq <= log.lastSeq + 1; seq++) {
            expect(log.get(seq)).toBe(plain.get(seq));
            expect(log.retainsAfter(seq)).toBe(plain.retainsAfter(seq));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the same after fit(), with events dropped and packed before it, and takes appends after it', () => {
    for (const log of [new EventLog<number>(6, (n) => n % 10), new EventLog<number>(6, (n) => n % 10, 1, packing(2, 3)), new EventLog<number>(6, (n) => n % 10, 1, openPacking(2, 3))]) {
      for (let i = 0; i < 9; i++) log.append(log.nextSeq);
      const read = (): unknown => ({ first: log.firstSeq, last: log.lastSeq, bytes: log.bytes, events: [...Array(12).keys()].map((seq) => log.get(seq)) });
      const before = read();
      log.fit();
      expect(read()).toEqual(before);
      expect([...Array(12).keys()].map((seq) => log.get(seq))).toEqual([undefined, undefined, undefined, undefined, 4, 5, 6, 7, 8, 9, undefined, undefined]);
      log.append(log.nextSeq);
      expect([log.firstSeq, log.lastSeq, log.get(10), log.get(4)]).toEqual([5, 10, 10, undefined]);
    }
  });

  it('refuses a capacity that cannot hold an event', () => {
    expect(() => new EventLog(0)).toThrow('positive integer');
  });
});

describe('TASK_EVENT_PACKING (a task\'s events in blocks)', () => {
  const head = toolFrameHead('t1', 'c1');
  const status = (seq: number, terminal = false): TaskEvent => new TaskEvent(seq, `{"statusUpdate":{"taskId":"t1","n":${seq}}}`, false, terminal);
  /** A frame as the runtime writes it (its tool call id first), or with another field first. */
  const frame = (seq: number, id: string, idFirst = true, last = seq % 2 === 0, on = head): ToolFrameEvent => {
    const rest = `"name":"n","phase":"${last ? 'completed' : 'started'}","result":{"s":"\\"}`;
    const json = idFirst ? `{"toolCallId":${JSON.stringify(id)},${rest}}` : `{"name":"n","toolCallId":${JSON.stringify(id)},${rest.slice('"name":"n",'.length)}}`;
    return new ToolFrameEvent(seq, on, toolCallIdText(id), json, last);
  };
  // A tool frame on another head than the block's reads back as a plain event of the same JSON (one head per block).
  const readable = (event: TaskEvent | undefined): unknown[] =>
    event === undefined ? [] : [event.seq, event.json, event.weight, event.jsonBytes, event.isToolFrame, event.terminal, ...(event instanceof ToolFrameEvent && event.head === head ? [event.idPart, event.frameJson, event.lastChunk] : [])];
  // Ids that JSON escapes (quote, backslash, control, lone surrogate), an empty one, non-ASCII ones, plain ones.
  const ids = ['call_1', 'a"b', 'back\\slash\\', 'tab\tnl\n', '\ud800x', '', 'ünï ✓', 'x'.repeat(40)];
  const events = (): TaskEvent[] => {
    const list: TaskEvent[] = [status(1)];
    let seq = 2;
    for (const id of ids) for (const idFirst of [true, false]) list.push(frame(seq++, id, idFirst), frame(seq++, id, idFirst));
    list.push(frame(seq++, 'other-head', true, false, toolFrameHead('t2', 'c2')), status(seq++, true));
    return list;
  };

  it('reads every event back as it was logged, from the open block and from the block it is closed into', () => {
    const logged = events();
    const open = new OpenTaskEventBlock(1);
    for (const event of logged) open.add(event);
    expect(logged.map((event) => readable(open.get(event.seq)))).toEqual(logged.map(readable));
    expect(logged.map((event) => open.weight(event.seq))).toEqual(logged.map((event) => event.weight));
    expect(open.addedWeight).toBe(logged.reduce((sum, event) => sum + event.weight, 0));
    const closed = open.close();
    expect(closed).toBeInstanceOf(TaskEventBlock);
    expect(logged.map((event) => readable(closed.get(event.seq)))).toEqual(logged.map(readable));
    expect(logged.map((event) => closed.weight(event.seq))).toEqual(logged.map((event) => event.weight));
    open.fit();
    expect(logged.map((event) => readable(open.get(event.seq)))).toEqual(logged.map(readable));
  });

  it('keeps a tool call id that its frame JSON gives once: a closed block of such frames is their frames\' JSON, nothing more', () => {
    const logged = Array.from({ length: 300 }, (_, i) => frame(i + 1, `call_${i >> 1}`));
    const closed = TaskEventBlock.of(logged, 1) as unknown as { json: Buffer; splits: unknown };
    expect(closed.json.toString('latin1')).toBe(logged.map((event) => event.frameJson).join(''));
    expect(closed.splits).toBeUndefined();
    // A frame that does not start with its id keeps the id before it.
    const other = TaskEventBlock.of([frame(1, 'call_0', false)], 1) as unknown as { json: Buffer; splits: unknown };
    expect(other.json.toString('latin1')).toBe('call_0' + frame(1, 'call_0', false).frameJson);
    expect(other.splits).toEqual([0, 'call_0'.length]);
  });

  it('keeps a closed block that is all ASCII as bytes outside the JS heap, any other as a string, and reads both back', () => {
    // The ids JSON escapes among them (quote, backslash, controls): the id is read back from the bytes.
    const asciiIds = ids.filter((id) => [...id].every((c) => c.charCodeAt(0) < 0x80));
    const ascii: TaskEvent[] = [status(1)];
    for (const id of asciiIds) for (const idFirst of [true, false]) ascii.push(frame(ascii.length + 1, id, idFirst), frame(ascii.length + 2, id, idFirst));
    ascii.push(status(ascii.length + 1, true));
    // Non-ASCII anywhere, and last (its UTF-8 one byte longer than it, cut short where the bytes end, is as long as it).
    const others = [events(), [frame(1, 'call_0'), frame(2, 'é')], [frame(1, 'é')]];
    for (const logged of [ascii, ...others]) {
      const block = TaskEventBlock.of(logged, 1);
      expect(Buffer.isBuffer((block as unknown as { json: unknown }).json)).toBe(logged === ascii);
      expect(logged.map((event) => readable(block.get(event.seq)))).toEqual(logged.map(readable));
      expect(logged.map((event) => block.weight(event.seq))).toEqual(logged.map((event) => event.weight));
    }
  });

  it('a closed block takes over the bytes of the block its log dropped, when they fit: a long task allocates no new ones', () => {
    const log = new EventLog<TaskEvent>(12, (event) => event.weight, 1, { ...TASK_EVENT_PACKING, block: 4 });
    const rooms = new Set<ArrayBufferLike>();
    let closed = 0;
    for (let seq = 1; seq <= 400; seq++) {
      log.append(frame(seq, `call_${1000 + (seq >> 1)}`));
      const blocks = (log as unknown as { blocks: (unknown | undefined)[] }).blocks.filter((block): block is TaskEventBlock => block instanceof TaskEventBlock);
      for (const block of blocks) {
        const bytes = block.bytes as Buffer;
        if (!rooms.has(bytes.buffer)) closed += 1;
        rooms.add(bytes.buffer);
      }
    }
    // 3 blocks retained at most, one more closing as one drops: ~100 blocks closed in ~4 rooms.
    expect(closed).toBeLessThanOrEqual(5);
    // A much larger room is not taken over (a block keeps at most an eighth more than its text, and 4 KiB).
    const big = TaskEventBlock.of([frame(1, 'x'.repeat(20_000))], 1);
    const small = new OpenTaskEventBlock(1);
    small.add(frame(1, 'call_0'));
    expect((small.close(big).bytes as Buffer).buffer).not.toBe((big.bytes as Buffer).buffer);
    const same = new OpenTaskEventBlock(1);
    same.add(frame(1, 'x'.repeat(19_000)));
    expect((same.close(big).bytes as Buffer).buffer).toBe((big.bytes as Buffer).buffer);
  });

  it('in a log, reads back any event it retains after any appends, trims and packs', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.boolean(), fc.integer({ min: 0, max: 5 })), { maxLength: 120 }), fc.integer({ min: 1, max: 40 }), (steps, capacity) => {
        const log = new EventLog<TaskEvent>(capacity, (event) => event.weight, 1, { ...TASK_EVENT_PACKING, block: 7, blockWeight: 900 });
        const logged: TaskEvent[] = [];
        for (const [kind, idFirst, action] of steps) {
          const seq = log.nextSeq;
          const event = kind === 9 ? status(seq) : frame(seq, ids[kind % ids.length], idFirst);
          logged.push(event);
          log.append(event);
          if (action === 0) log.cool();
          else if (action === 1) log.pack();
        }
        const retained = logged.filter((event) => event.seq >= log.firstSeq);
        expect(retained.map((event) => readable(log.get(event.seq)))).toEqual(retained.map(readable));
        expect(log.bytes).toBe(retained.reduce((sum, event) => sum + event.weight, 0));
      }),
    );
  });
});


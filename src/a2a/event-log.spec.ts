import fc from 'fast-check';
import { EventLog } from './event-log';

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

  it('refuses a capacity that cannot hold an event', () => {
    expect(() => new EventLog(0)).toThrow('positive integer');
  });
});

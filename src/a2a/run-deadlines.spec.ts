import { RunDeadlines } from './run-deadlines';

/** Deadlines of tasks that never settle, and the ids overrun so far. */
function neverSettling(deadlineMs: number): { deadlines: RunDeadlines; overrun: string[] } {
  const overrun: string[] = [];
  return { deadlines: new RunDeadlines(deadlineMs, () => true, (id) => overrun.push(id)), overrun };
}

describe('RunDeadlines', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('overruns each running task at its own deadline, with one timer for all of them', () => {
    const running = new Set<string>();
    const overrun: Array<[string, number]> = [];
    const deadlines = new RunDeadlines(1_000, (id) => running.has(id), (id) => overrun.push([id, Date.now()]));
    for (const id of ['a', 'b', 'c', 'd']) {
      running.add(id);
      deadlines.add(id);
      jest.advanceTimersByTime(100);
    }
    expect(jest.getTimerCount()).toBe(1);
    // b settles before its time: it is skipped, the others fail when theirs comes.
    running.delete('b');
    deadlines.settled();
    jest.advanceTimersByTime(599);
    expect(overrun).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(overrun).toEqual([['a', 1_000]]);
    jest.advanceTimersByTime(300);
    expect(overrun).toEqual([
      ['a', 1_000],
      ['c', 1_200],
      ['d', 1_300],
    ]);
    expect(jest.getTimerCount()).toBe(0);
    expect(deadlines.size).toBe(0);
  });

  it('re-arms for a task added after the others have passed', () => {
    const { deadlines, overrun } = neverSettling(50);
    deadlines.add('first');
    jest.advanceTimersByTime(50);
    deadlines.add('second');
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(49);
    expect(overrun).toEqual(['first']);
    jest.advanceTimersByTime(1);
    expect(overrun).toEqual(['first', 'second']);
  });

  it('drops the entries of settled tasks once they outnumber the running ones, keeping the running', () => {
    const running = new Set<string>();
    const overrun: string[] = [];
    const deadlines = new RunDeadlines(60_000, (id) => running.has(id), (id) => overrun.push(id));
    running.add('long');
    deadlines.add('long');
    for (let i = 0; i < 10_000; i++) {
      const id = `short-${i}`;
      running.add(id);
      deadlines.add(id);
      running.delete(id);
      deadlines.settled();
    }
    expect(deadlines.size).toBeLessThan(1_100);
    jest.advanceTimersByTime(60_000);
    expect(overrun).toEqual(['long']);
  });

  it('keeps to its deadlines when the wall clock is set back (a monotonic clock, as a timer per task had)', () => {
    const { deadlines, overrun } = neverSettling(1_000);
    deadlines.add('a');
    jest.advanceTimersByTime(500);
    deadlines.add('b');
    jest.setSystemTime(Date.now() - 3_600_000);
    jest.advanceTimersByTime(500);
    expect(overrun).toEqual(['a']);
    jest.advanceTimersByTime(500);
    expect(overrun).toEqual(['a', 'b']);
  });

  it('stops its timer', () => {
    const { deadlines, overrun } = neverSettling(10);
    deadlines.add('a');
    deadlines.stop();
    jest.advanceTimersByTime(100);
    expect(overrun).toEqual([]);
  });
});

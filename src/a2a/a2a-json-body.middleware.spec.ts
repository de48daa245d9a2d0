import { BodyDeadlines } from './a2a-json-body.middleware';

describe('BodyDeadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('expires each body timeoutMs after it was added, in order, with one timer for all', () => {
    const deadlines = new BodyDeadlines(1_000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    jest.advanceTimersByTime(400);
    deadlines.add(() => expired.push('b'));
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(599);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(399);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('never expires a body removed before its time, wherever it is in the list; the others still expire', () => {
    const deadlines = new BodyDeadlines(1_000);
    const expired: string[] = [];
    const a = deadlines.add(() => expired.push('a'));
    jest.advanceTimersByTime(100);
    const b = deadlines.add(() => expired.push('b'));
    jest.advanceTimersByTime(100);
    deadlines.add(() => expired.push('c'));
    jest.advanceTimersByTime(100);
    const d = deadlines.add(() => expired.push('d'));
    deadlines.remove(b);
    deadlines.remove(a);
    deadlines.remove(d);
    deadlines.remove(a);
    jest.advanceTimersByTime(2_000);
    expect(expired).toEqual(['c']);
    // The list is empty: the timer is not armed again.
    expect(jest.getTimerCount()).toBe(0);
    deadlines.add(() => expired.push('e'));
    jest.advanceTimersByTime(1_000);
    expect(expired).toEqual(['c', 'e']);
  });

  it('is armed again when an expiry throws, so the bodies after it still expire', () => {
    const deadlines = new BodyDeadlines(1_000);
    const expired: string[] = [];
    deadlines.add(() => {
      throw new Error('refusing failed');
    });
    jest.advanceTimersByTime(10);
    deadlines.add(() => expired.push('b'));
    expect(() => jest.advanceTimersByTime(990)).toThrow('refusing failed');
    jest.advanceTimersByTime(10);
    expect(expired).toEqual(['b']);
  });
});

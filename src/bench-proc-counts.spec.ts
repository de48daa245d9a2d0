/**
 * bench/lib/proc-counts.ts's run-queue wait: what the bench logs beside a paced row's p99.
 */
import { runQueueWaitUs } from '../bench/lib/proc-counts';

describe('runQueueWaitUs', () => {
  it('reads a live process’s wait, summed over its threads, from /proc', () => {
    const waited = runQueueWaitUs(process.pid);
    expect(waited).toEqual(expect.any(Number));
    expect(waited).toBeGreaterThanOrEqual(0);
  });

  it('has no figure for a process that is not there', () => {
    expect(runQueueWaitUs(undefined)).toBeUndefined();
    expect(runQueueWaitUs(2 ** 22 + 12345)).toBeUndefined();
  });
});

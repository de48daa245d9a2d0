import type { StreamPace } from '../../src/a2a/task-stream';

/** A consumer's pace the test opens and shuts (a response whose buffer is full, then drained). */
export function gate(): StreamPace & { shut(): void; open(): void } {
  let shut = false;
  let waiting: (() => void)[] = [];
  return {
    ready: () => !shut,
    whenReady: (callback) => {
      waiting.push(callback);
      return () => (waiting = waiting.filter((w) => w !== callback));
    },
    shut: () => (shut = true),
    open: () => {
      shut = false;
      for (const callback of waiting.splice(0)) callback();
    },
  };
}

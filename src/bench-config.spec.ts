/**
 * The full run's empty-task warm-up must take every server past toolstream's default cap on
 * kept tasks: the first tasks after it make V8 recompile the store's paths once, and a counted
 * repetition that held them measured that one-off, not the per-task cost (docs/performance.md,
 * "How the empty task is measured").
 */
import { benchConfig } from '../bench/lib/config';
import { A2A_DEFAULTS } from './a2a';

describe('the bench config', () => {
  it('warms the empty task past the default cap on kept tasks, with room for the recompiles after it', () => {
    const full = benchConfig(false);
    expect(full.emptyWarmUpMinTasks).toBeGreaterThanOrEqual(A2A_DEFAULTS.maxRetainedTasks + 2_000);
    expect(full.emptyWarmUpMaxTasks).toBeGreaterThanOrEqual(full.emptyWarmUpMinTasks);
  });
});

import * as fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { DurationHistogram } from './duration-histogram';

const NAME = 'toolstream_tool_call_duration_seconds';
const HELP = 'Duration of tool calls.';
const BOUNDS = [0.005, 0.025, 0.1, 1, 2.5];
const LABEL_SETS = [
  { tool: 'weather', outcome: 'completed' },
  { tool: 'weather', outcome: 'failed' },
  { tool: 'other', outcome: 'completed' },
];

/** The same label sets and observations on prom-client's Histogram and on DurationHistogram. */
function both(observations: [number, number][]): { theirs: Registry; ours: Registry; histogram: DurationHistogram } {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ name: NAME, help: HELP, labelNames: ['tool', 'outcome'], buckets: BOUNDS, registers: [theirs] });
  const histogram = new DurationHistogram(NAME, HELP, BOUNDS, [ours]);
  const series = LABEL_SETS.map((labels) => {
    reference.zero(labels);
    return { reference: reference.labels(labels), ours: histogram.series(labels) };
  });
  for (const [which, seconds] of observations) {
    series[which].reference.observe(seconds);
    series[which].ours.observe(seconds);
  }
  return { theirs, ours, histogram };
}

describe('DurationHistogram', () => {
  it('exposes exactly what prom-client exposes for a Histogram with the same observations', async () => {
    const seconds = fc.oneof(fc.constantFrom(0, ...BOUNDS, 3, 1e9), fc.double({ min: 0, max: 10, noNaN: true }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: LABEL_SETS.length - 1 }), seconds), { maxLength: 40 }), async (observations) => {
        const { theirs, ours } = both(observations);
        expect(await ours.metrics()).toBe(await theirs.metrics());
        expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
      }),
    );
  });

  it('counts a value on a bound in that bound, past the last one only in +Inf, and zeroes on reset', async () => {
    const { theirs, ours } = both([
      [0, 0.025],
      [0, 30],
      [1, 0.004],
    ]);
    const text = await ours.metrics();
    expect(text).toContain(`${NAME}_bucket{le="0.005",tool="weather",outcome="completed"} 0`);
    expect(text).toContain(`${NAME}_bucket{le="0.025",tool="weather",outcome="completed"} 1`);
    expect(text).toContain(`${NAME}_bucket{le="2.5",tool="weather",outcome="completed"} 1`);
    expect(text).toContain(`${NAME}_bucket{le="+Inf",tool="weather",outcome="completed"} 2`);
    expect(text).toContain(`${NAME}_sum{tool="weather",outcome="completed"} 30.025`);
    expect(text).toContain(`${NAME}_count{tool="weather",outcome="failed"} 1`);
    ours.resetMetrics();
    expect(await ours.metrics()).toContain(`${NAME}_count{tool="weather",outcome="completed"} 0`);
    expect(await ours.metrics()).toContain(`${NAME}_sum{tool="weather",outcome="completed"} 0`);
    // prom-client's reset drops its series until they are observed again; ours stay, at zero.
    expect(await theirs.metrics()).not.toBe(await ours.metrics());
  });

  it('zeroes and reuses the series of a label set asked for again, as zero() does', async () => {
    const { ours, histogram } = both([[0, 0.5]]);
    const again = histogram.series({ outcome: 'completed', tool: 'weather' });
    again.observe(0.01);
    const text = await ours.metrics();
    expect(text.match(/_count\{tool="weather",outcome="completed"\}/g)).toHaveLength(1);
    expect(text).toContain(`${NAME}_count{tool="weather",outcome="completed"} 1`);
    expect(text).toContain(`${NAME}_sum{tool="weather",outcome="completed"} 0.01`);
  });

  it('refuses a value that is not a finite number, as prom-client does', () => {
    const { histogram } = both([]);
    expect(() => histogram.series(LABEL_SETS[0]).observe(Number.NaN)).toThrow(TypeError);
  });
});

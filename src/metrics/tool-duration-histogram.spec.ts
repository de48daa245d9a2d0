import fc from 'fast-check';
import { Histogram, Registry, type Metric } from 'prom-client';
import { ToolDurationHistogram, type HistogramSeries } from './tool-duration-histogram';

const NAME = 'toolstream_tool_call_duration_seconds';
const HELP = 'Duration of tool calls.';

/** The same histogram both ways: prom-client's own and ToolDurationHistogram, each in a registry of its own. */
function pair(buckets: number[], openMetrics: boolean, defaultLabels?: Record<string, string>) {
  // The content type is a constructor argument its types do not declare.
  const RegistryOf = Registry as unknown as new (contentType: string) => Registry;
  const contentType = openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE;
  const theirs = new RegistryOf(contentType);
  const ours = new RegistryOf(contentType);
  if (defaultLabels) {
    theirs.setDefaultLabels(defaultLabels);
    ours.setDefaultLabels(defaultLabels);
  }
  const reference = new Histogram({ name: NAME, help: HELP, labelNames: ['tool', 'outcome'], buckets, registers: [theirs] });
  const histogram = new ToolDurationHistogram(NAME, HELP, buckets);
  ours.registerMetric(histogram as unknown as Metric);
  const series = new Map<string, HistogramSeries>();
  const labelsOf = (tool: string, outcome: string) => ({ tool, outcome });
  return {
    theirs,
    ours,
    zero(tool: string, outcome: string) {
      reference.zero(labelsOf(tool, outcome));
      series.set(`${tool}/${outcome}`, histogram.series(labelsOf(tool, outcome)));
    },
    observe(tool: string, outcome: string, seconds: number) {
      reference.observe(labelsOf(tool, outcome), seconds);
      let s = series.get(`${tool}/${outcome}`);
      if (!s) {
        // prom-client makes a series on its first observation; here the caller makes it first.
        s = histogram.series(labelsOf(tool, outcome));
        series.set(`${tool}/${outcome}`, s);
      }
      histogram.observe(s, seconds);
    },
    reset() {
      reference.reset();
      histogram.reset();
    },
  };
}

describe('ToolDurationHistogram', () => {
  it('exposes exactly what prom-client’s Histogram does, fed the same observations (text and JSON)', async () => {
    const bucketsArb = fc.uniqueArray(fc.double({ min: 0.0001, max: 100, noNaN: true }), { minLength: 1, maxLength: 8 }).map((b) => b.sort((x, y) => x - y));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('zero' as const), tool: fc.constantFrom('a', 'b', 'c'), outcome: fc.constantFrom('completed', 'failed') }),
      fc.record({
        kind: fc.constant('observe' as const),
        tool: fc.constantFrom('a', 'b', 'c'),
        outcome: fc.constantFrom('completed', 'failed'),
        seconds: fc.oneof(fc.double({ min: 0, max: 200, noNaN: true }), fc.constantFrom(0, 0.005, 1, 100)),
      }),
      fc.record({ kind: fc.constant('reset' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(bucketsArb, fc.array(op, { maxLength: 40 }), fc.boolean(), fc.boolean(), async (buckets, ops, openMetrics, withDefaults) => {
        const h = pair(buckets, openMetrics, withDefaults ? { app: 'x' } : undefined);
        for (const o of ops) {
          if (o.kind === 'zero') h.zero(o.tool, o.outcome);
          else if (o.kind === 'observe') h.observe(o.tool, o.outcome, o.seconds);
          else h.reset();
        }
        expect(await h.ours.metrics()).toBe(await h.theirs.metrics());
        expect(await h.ours.getMetricsAsJSON()).toEqual(await h.theirs.getMetricsAsJSON());
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a value that is not a finite number, as prom-client does', () => {
    const histogram = new ToolDurationHistogram(NAME, HELP, [1]);
    const series = histogram.series({ tool: 'a', outcome: 'completed' });
    expect(() => histogram.observe(series, Number.NaN)).toThrow(TypeError);
    expect(() => histogram.observe(series, Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });

  it('gives the same series again for the same labels, set back to zero (as zero() does)', () => {
    const histogram = new ToolDurationHistogram(NAME, HELP, [1]);
    const series = histogram.series({ tool: 'a', outcome: 'completed' });
    histogram.observe(series, 0.5);
    expect(histogram.series({ tool: 'a', outcome: 'completed' })).toBe(series);
    expect(series.count).toBe(0);
  });
});

import type { Metric, Registry } from 'prom-client';

/** One label set's counts: per bucket (not cumulative), their sum and count. */
export class DurationSeries {
  /** Observations per bucket: `counts[i]` ≤ bounds[i] and > bounds[i - 1]. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = bounds.map(() => 0);
  }

  /** As prom-client's observe: the first bucket whose bound is ≥ the value, or only the count (+Inf). */
  observe(seconds: number): void {
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i++;
    if (i < bounds.length) this.counts[i] += 1;
    this.sum += seconds;
    this.count += 1;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

interface ExportedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
  /** As prom-client's values carry it (null on a bucket without exemplars, else undefined). */
  exemplar: null | undefined;
}

/**
 * A Prometheus histogram whose series count in plain numbers: an observation is a bucket
 * search and three additions. prom-client's Histogram checks the label set, builds its hash
 * string and allocates per observation (the tool-call duration is observed once per tool call,
 * on every stream's frame path). It is registered in prom-client registries and exposed exactly
 * as prom-client exposes a Histogram: per series, its cumulative buckets (`le` first), then
 * `+Inf`, `_sum` and `_count`.
 */
export class DurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all: DurationSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registers: Registry[],
  ) {
    // The registry keeps any object with a name and get() (and reset()): prom-client's Metric
    // type names only its own four classes.
    for (const registry of registers) registry.registerMetric(this as unknown as Metric);
  }

  /**
   * The series of this label set, at zero (as prom-client's `zero()`: one made before for the
   * same labels is zeroed and reused). Exposed from now on, in the order they were first made.
   */
  series(labels: Record<string, string>): DurationSeries {
    const key = labelKey(labels);
    const known = this.all.find((series) => labelKey(series.labels) === key);
    if (known) {
      known.reset();
      return known;
    }
    const series = new DurationSeries(labels, this.bounds);
    this.all.push(series);
    return series;
  }

  /** Every series back to zero (prom-client's Registry.resetMetrics). */
  reset(): void {
    for (const series of this.all) series.reset();
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }> {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.all) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.counts[i];
        values.push({ value: cumulative, labels: { le: bound, ...series.labels }, metricName: bucket, exemplar: null });
      });
      values.push({ value: series.count, labels: { le: '+Inf', ...series.labels }, metricName: bucket, exemplar: null });
      values.push({ value: series.sum, labels: { ...series.labels }, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ value: series.count, labels: { ...series.labels }, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }
}

function labelKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

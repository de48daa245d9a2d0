/**
 * One series of a ToolDurationHistogram: its label set and what it counted (per bucket, not
 * cumulative), held by whoever observes it so that an observation looks nothing up.
 */
export interface HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  /** Observations per bucket bound (the last slot: above every bound). */
  readonly counts: number[];
  sum: number;
  count: number;
  /** Whether it is exported (a reset drops every series until it is observed or zeroed again, as prom-client does). */
  listed: boolean;
}

interface ValuePair {
  value: number;
  metricName: string;
  exemplar: null | undefined;
  labels: Record<string, string | number>;
  /** The series' labels, apart (for the text: a registry's default labels go between `le` and these). */
  sharedLabels?: Readonly<Record<string, string>>;
}

/**
 * A histogram for a registry of prom-client's, counted in plain numbers: prom-client's own
 * Histogram, per observation, builds a string key from the label set and looks the series up by
 * it, and turns a bucket bound into a property name (twice), which made it most of a tool call's
 * metrics cost (a tool call ends once every two frames). Here the caller holds its series, and an
 * observation adds to three numbers. What a scrape reads (`get`, `getForPromString`) has exactly
 * the shape prom-client's Histogram gives, so the exposition is byte for byte the same (a unit
 * spec compares the two, fed the same observations).
 */
export class ToolDurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** The exported series, in the order they were first zeroed or observed. */
  private listed: HistogramSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
  ) {}

  /** A series at zero, exported from now on (prom-client's `zero(labels)`: a series of the same labels is set back to zero, and given). */
  series(labels: Readonly<Record<string, string>>): HistogramSeries {
    const same = this.listed.find((s) => sameLabels(s.labels, labels));
    if (same) {
      same.counts.fill(0);
      same.sum = 0;
      same.count = 0;
      return same;
    }
    const series: HistogramSeries = { labels, counts: new Array<number>(this.upperBounds.length + 1).fill(0), sum: 0, count: 0, listed: false };
    this.list(series);
    return series;
  }

  observe(series: HistogramSeries, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    series.counts[i] += 1;
    series.sum += value;
    series.count += 1;
    if (!series.listed) this.list(series);
  }

  /** Drops every series (prom-client's `reset`): one observed again comes back from zero. */
  reset(): void {
    for (const series of this.listed) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
      series.listed = false;
    }
    this.listed = [];
  }

  /** What prom-client's registry reads for the text exposition: a value's own labels (`le`) and the series' apart. */
  getForPromString(): Promise<{ name: string; help: string; type: string; values: ValuePair[]; aggregator: string }> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values: this.values(false), aggregator: this.aggregator });
  }

  /** What prom-client's registry reads for JSON and cluster aggregation: the same values, their labels in one record. */
  get(): Promise<{ name: string; help: string; type: string; values: ValuePair[]; aggregator: string }> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values: this.values(true), aggregator: this.aggregator });
  }

  private list(series: HistogramSeries): void {
    series.listed = true;
    this.listed.push(series);
  }

  /** As prom-client's Histogram lists them: per series, its buckets (cumulative), +Inf, sum and count. */
  private values(splay: boolean): ValuePair[] {
    const values: ValuePair[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.listed) {
      const pair = (labels: Record<string, string | number>, value: number, metricName: string, exemplar: null | undefined): ValuePair =>
        splay ? { value, metricName, exemplar, labels: { ...labels, ...series.labels } } : { labels, sharedLabels: series.labels, value, metricName, exemplar };
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += series.counts[i];
        values.push(pair({ le }, cumulative, bucket, null));
      });
      values.push(pair({ le: '+Inf' }, series.count, bucket, null));
      values.push(pair({}, series.sum, `${this.name}_sum`, undefined));
      values.push(pair({}, series.count, `${this.name}_count`, undefined));
    }
    return values;
  }
}

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

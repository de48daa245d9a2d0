/**
 * The contract of a bench section that lives in its own file under bench/sections/ and is
 * listed in run.ts's EXTRA_SECTIONS: it measures with the shared load process and server pool
 * (or servers of its own, which it stops), repeats every figure `config.reps` times, and returns
 * its table; the report prints it with min / median / max, and results.json keeps every
 * repetition. Its loads go through `pool.load`, so their streams count in the run's validity.
 */
import type { BenchConfig } from './config';
import type { ServerPool } from './server-pool';
import type { Spread } from './stats';

export interface SectionContext {
  config: BenchConfig;
  pool: ServerPool;
  log: (line: string) => void;
}

/** One row of a section's table: a label, then one cell per column (a spread, or text). */
export interface SectionRow {
  label: string;
  cells: Array<Spread | string>;
}

/** A target the section checks: met only when its worst repetition meets it. */
export interface SectionTarget {
  target: string;
  /** The worst repetition, as printed. */
  worst: string;
  /** Every repetition, as printed. */
  reps: string;
  met: boolean;
}

export interface SectionReport {
  title: string;
  /** One or two sentences: what is measured, how, and what a row means. */
  description: string;
  columns: string[];
  /** Digits after the point for spreads, per column (default 0). */
  digits?: number[];
  rows: SectionRow[];
  targets?: SectionTarget[];
  /** Anything else the section wants kept in results.json (raw repetitions). */
  data?: unknown;
}

export interface BenchSection {
  /** The name --only=<name> selects. */
  name: string;
  run(ctx: SectionContext): Promise<SectionReport>;
}

/**
 * Warm-up to steady state, shared by the sections that measure a cost per unit of work (the
 * executor overhead, the empty task): a fresh process spends its first thousands of requests or
 * runs compiling the hot path (V8's optimising compiler runs on threads of its own, and their
 * CPU counts) and growing its heap to its working size. A server in production does that once
 * and then serves millions of requests, so the figure a section reports is taken after it.
 */

export interface Batch {
  /** What the batch measured: the figure that falls while the code is still being compiled. */
  figure: number;
  /** What the batch cost, in the unit of `maxCost` (CPU ms, tasks...). */
  cost: number;
}

export interface SteadyOptions {
  /** The figure of the work done before, if any: the first batch is compared with it. */
  previous?: number;
  /** A batch whose figure is no longer this share below the one before it is steady (0.03: 3 %). */
  tolerance: number;
  /** Work done before any batch can count as steady: a plateau between compiler tiers is not. */
  minCost?: number;
  /** Batches in a row that must not fall before the figure counts as settled (default 1). */
  patience?: number;
  /** Caps: the warm-up stops there whether or not the figure has settled. */
  maxCost?: number;
  maxMs?: number;
}

export interface SteadyResult {
  /** Every batch's figure, in order. */
  figures: number[];
  cost: number;
  /** False when a cap ended the warm-up before the figure settled. */
  steady: boolean;
}

/**
 * Runs `batch` until its figure stops falling: once `minCost` is done, until `patience`
 * batches in a row are each no longer `tolerance` below the one before (a batch that costs more than the one before also ends it: the
 * compiler is done and the machine's noise has taken over), or until a cap is reached.
 */
export async function untilSteady(batch: () => Promise<Batch>, options: SteadyOptions): Promise<SteadyResult> {
  const { tolerance, minCost = 0, patience = 1, maxCost = Infinity, maxMs = Infinity } = options;
  const started = Date.now();
  const figures: number[] = [];
  let previous = options.previous ?? Infinity;
  let cost = 0;
  let level = 0;
  while (cost < maxCost && Date.now() - started < maxMs) {
    const done = await batch();
    figures.push(done.figure);
    cost += done.cost;
    level = done.figure >= previous * (1 - tolerance) ? level + 1 : 0;
    if (cost >= minCost && level >= patience) return { figures, cost, steady: true };
    previous = done.figure;
  }
  return { figures, cost, steady: false };
}

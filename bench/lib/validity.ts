/**
 * What makes a run's figures worth reading: every stream the load opened either completed (its
 * task's COMPLETED status, no JSON-RPC error) with exactly the frames its scenario publishes or
 * was cut at a time limit the report names; none failed; every sampled frame parsed as a tool-call-v1 frame, and frames were sampled at all.
 * The harness exits non-zero when this does not hold.
 */
import type { LoadJob, LoadResult } from '../load/load-types';

export interface Validity {
  jobs: number;
  streams: number;
  completed: number;
  cut: number;
  failedStreams: number;
  /** Completed streams whose frame count differs from the scenario's. */
  wrongFrameCounts: number;
  checkedFrames: number;
  invalidFrames: number;
  /** Jobs that received frames of which none was checked (the sampled check did not run). */
  uncheckedJobs: number;
  /** The first distinct errors, with the job they came from. */
  errors: string[];
  ok: boolean;
}

const MAX_ERRORS = 10;

export class ValidityLedger {
  private readonly v: Validity = {
    jobs: 0,
    streams: 0,
    completed: 0,
    cut: 0,
    failedStreams: 0,
    wrongFrameCounts: 0,
    checkedFrames: 0,
    invalidFrames: 0,
    uncheckedJobs: 0,
    errors: [],
    ok: true,
  };

  record(job: LoadJob, result: LoadResult): void {
    const v = this.v;
    v.jobs++;
    v.streams += result.streams;
    v.completed += result.completed;
    v.cut += result.cut;
    v.failedStreams += result.failed;
    v.wrongFrameCounts += result.wrongFrameCounts;
    v.checkedFrames += result.checkedFrames;
    v.invalidFrames += result.invalidFrames;
    if (result.frames > 0 && result.checkedFrames === 0) v.uncheckedJobs++;
    const where = `${job.url} ${job.streams}×${job.scenario.toolCalls}`;
    for (const error of result.errors) if (v.errors.length < MAX_ERRORS) v.errors.push(`${where}: ${error}`);
    if (result.invalidFrames > 0 && v.errors.length < MAX_ERRORS) v.errors.push(`${where}: ${result.invalidFrames} invalid frames`);
    if (result.wrongFrameCounts > 0 && v.errors.length < MAX_ERRORS) {
      v.errors.push(`${where}: ${result.wrongFrameCounts} completed streams without the scenario's frames`);
    }
    v.ok = v.failedStreams === 0 && v.invalidFrames === 0 && v.wrongFrameCounts === 0 && v.uncheckedJobs === 0;
  }

  summary(): Validity {
    return { ...this.v, errors: [...this.v.errors] };
  }
}

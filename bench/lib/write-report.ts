/**
 * Writes a run's report: results.json, RESULTS.md, chart.svg and, for a complete full run, the
 * generated block of docs/performance.md. Shared by `npm run bench` (after measuring) and
 * `npm run bench:render` (the committed results.json again, after a change to the report code).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chart, markdownSummary, shortSummary, type BenchResults } from './report';

const PERFORMANCE_DOC = join(__dirname, '..', '..', 'docs', 'performance.md');
const SUMMARY_START = '<!-- bench:summary:start -->';
const SUMMARY_END = '<!-- bench:summary:end -->';

/** A full run refreshes the generated block of docs/performance.md (and nothing else there). */
function updatePerformanceDoc(summary: string): boolean {
  let doc: string;
  try {
    doc = readFileSync(PERFORMANCE_DOC, 'utf8');
  } catch {
    return false;
  }
  const start = doc.indexOf(SUMMARY_START);
  const end = doc.indexOf(SUMMARY_END);
  if (start === -1 || end < start) return false;
  writeFileSync(PERFORMANCE_DOC, `${doc.slice(0, start)}${SUMMARY_START}\n${summary}\n${doc.slice(end)}`);
  return true;
}

export interface WrittenReport {
  /** The markdown summary (with any INCOMPLETE RUN lines), as RESULTS.md carries it. */
  summary: string;
  chart: boolean;
  doc: boolean;
}

/** The INCOMPLETE RUN lines of a run that a section's failure or the time budget cut short. */
function incompleteLines(results: BenchResults): string {
  const { failure, skipped } = results.meta;
  return (
    (failure === undefined ? '' : `\n**INCOMPLETE RUN**: a section failed: ${failure}\n`) +
    (skipped?.length ? `\n**INCOMPLETE RUN**: sections skipped for the time budget: ${skipped.join(', ')}\n` : '')
  );
}

/** The docs block is refreshed only when `updateDoc` is set and the run is complete and valid. */
export function writeReport(results: BenchResults, dir: string, updateDoc: boolean): WrittenReport {
  const incomplete = incompleteLines(results);
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  const summary = `${markdownSummary(results)}${incomplete}`;
  writeFileSync(join(dir, 'RESULTS.md'), `# Benchmark results\n\n![frames/s and CPU per frame against tool calls per task, and against concurrent streams](chart.svg)\n\n${summary}\n`);
  const svg = chart(results);
  if (svg) writeFileSync(join(dir, 'chart.svg'), svg);
  const doc = updateDoc && incomplete === '' && results.validity?.ok === true && updatePerformanceDoc(shortSummary(results));
  return { summary, chart: svg !== undefined, doc };
}

/**
 * docs/performance.md's figures block is what `npm run bench` generates from bench/results.json
 * (the full run that wrote bench/RESULTS.md): no figure there is typed by hand.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { shortSummary, type BenchResults } from '../bench/lib/report';

const ROOT = join(__dirname, '..');
const START = '<!-- bench:summary:start -->\n';
const END = '<!-- bench:summary:end -->';

describe('docs/performance.md', () => {
  it('carries the summary of bench/results.json, as the bench wrote it', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'performance.md'), 'utf8');
    const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as BenchResults;
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    expect(doc.slice(start + START.length, end)).toBe(`${shortSummary(results)}\n`);
  });

  it('comes from a full run (not --quick)', () => {
    const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as BenchResults;
    expect(results.meta.quick).toBe(false);
  });
});

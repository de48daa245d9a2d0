/**
 * `npm run bench:render`: writes bench/RESULTS.md, chart.svg and the generated block of
 * docs/performance.md again from the committed bench/results.json, with the current report code
 * (and its target checks). Nothing is measured: every figure stays the run's own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchConfig } from './lib/config';
import { checkTargets, type BenchResults } from './lib/report';
import { writeReport } from './lib/write-report';

const dir = __dirname;
const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as BenchResults;
if (results.meta.quick) throw new Error('bench/results.json comes from a --quick run; only a full run is rendered here');
results.targets = checkTargets(results, benchConfig(false));
const written = writeReport(results, dir, true);
console.log(`rendered bench/RESULTS.md${written.chart ? ', chart.svg' : ''}${written.doc ? ' and docs/performance.md' : ''} from results.json of ${results.meta.date}`);

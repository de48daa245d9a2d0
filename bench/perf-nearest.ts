/**
 * `node -r ts-node/register/transpile-only bench/perf-nearest.ts <perf.data> <units> [top=40] [--hz=4999]`
 *
 * Where toolstream's own functions send the CPU, from a `perf record` with call chains
 * (`--perf=FILE,g` of bench/empty-task-gc.ts or bench/frame-cost.ts, node with
 * `--perf-basic-prof`; run bench/perf-map-newest.ts on the map file first, or the JavaScript
 * names are stale). Two lists, in µs per unit (the tasks or frames the recording covered):
 * each sample charged to the innermost of toolstream's src/ functions on its stack ("nearest":
 * what that function does itself and in Node, V8 and the packages it calls, its src/ callees
 * apart; samples with none are "(no src/ frame)"), and each src/ function's inclusive time
 * (every sample with it anywhere on the stack). perf-split.ts says what kind of work it is.
 */
import { perfCallChains } from './lib/perf-samples';

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const [file, unitsText, topText] = args;
  if (!file || !unitsText) throw new Error('usage: perf-nearest.ts <perf.data> <units> [top] [--hz=4999]');
  const units = Number(unitsText);
  const top = Number(topText ?? 40);
  const hz = Number(process.argv.find((a) => a.startsWith('--hz='))?.slice(5) ?? 4999);
  const nearest = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let samples = 0;
  const add = (map: Map<string, number>, key: string): void => {
    map.set(key, (map.get(key) ?? 0) + 1);
  };
  for await (const frames of perfCallChains(file)) {
    samples += 1;
    const own = frames.filter((f) => /^JS:\S* src\//.test(f));
    add(nearest, own[0] ?? '(no src/ frame)');
    for (const f of new Set(own)) add(inclusive, f);
  }
  const us = (count: number): string => ((count / hz / units) * 1e6).toFixed(1).padStart(7);
  const list = (title: string, map: Map<string, number>): void => {
    console.log(title);
    for (const [name, count] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${us(count)}  ${name}`);
  };
  console.log(`${us(samples)}  µs per unit sampled (${samples} samples, ${units} units, ${hz} Hz)`);
  list('nearest src/ function:', nearest);
  list('inclusive:', inclusive);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

/**
 * The bench's child processes (servers, load generator, executor-overhead child) run as
 * JavaScript compiled once per run, as a deployed server runs, rather than through ts-node in
 * each: loading toolstream's server through ts-node costs about 5 s of CPU per start, and a full
 * run starts servers a few dozen times. `tsc` here emits only (type checking is the project's
 * `npm run typecheck`), incrementally, into bench/.work/build.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const BENCH_DIR = join(__dirname, '..');

/** Compiles the children's sources; returns the directory the bench/ tree was emitted into. */
export function compileChildren(): string {
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(BENCH_DIR, 'tsconfig.children.json')], { stdio: 'inherit' });
  return join(BENCH_DIR, '.work', 'build', 'bench');
}

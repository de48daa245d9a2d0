import { join, resolve } from 'node:path';
import type { Target } from './lib/ipc';
import type { ServerProcess } from './lib/processes';

/** A server to compare, as bench/ab-servers.ts and bench/used-server.ts take it on their command line. */
export interface Variant {
  label: string;
  /** A directory with this repository's files (e.g. a `git archive` copy); undefined: this checkout. */
  checkout?: string;
  target: Target;
  /** More node flags for its server. */
  flags: string[];
}

/** `[checkout:]target[ flag,flag]`, e.g. `/tmp/before:toolstream` or `limit --trace-gc-nvp`. */
export function parseVariant(spec: string): Variant {
  const [where, ...flags] = spec.trim().split(/\s+/);
  const colon = where.lastIndexOf(':');
  const checkout = colon > 0 ? resolve(where.slice(0, colon)) : undefined;
  const target = (colon > 0 ? where.slice(colon + 1) : where) as Target;
  return { label: spec, checkout, target, flags: flags.flatMap((f) => f.split(',')).filter(Boolean) };
}

const compiledLibs = new Set<string>();

/**
 * The checkout's own ServerProcess (this checkout's without one), so that its servers run its
 * own sources. `compiled`: they run compiled, as in a full bench run (a server loaded through
 * ts-node also holds the TypeScript compiler, tens of MiB that every mark-compact marks).
 */
export function serverProcessOf(checkout: string | undefined, compiled = false): typeof ServerProcess {
  // The checkout is named on the command line, so its modules can only be loaded by path at run time.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const lib = join(checkout ?? join(__dirname, '..'), 'bench', 'lib');
  const processes = require(join(lib, 'processes')) as typeof import('./lib/processes');
  if (compiled && !compiledLibs.has(lib)) {
    const compile = require(join(lib, 'compile-children')) as typeof import('./lib/compile-children');
    /* eslint-enable @typescript-eslint/no-require-imports */
    processes.useCompiledChildren(compile.compileChildren());
    compiledLibs.add(lib);
  }
  return processes.ServerProcess;
}

import { resolve } from 'node:path';
import type { Target } from './lib/ipc';

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

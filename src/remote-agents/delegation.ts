/**
 * How deep a chain of agents asking agents is. Each hop carries the count in the A2A message
 * metadata, so an agent that would delegate past the limit refuses instead of looping.
 */

/** The message-metadata key: `{ depth, maxDepth }`, both whole numbers. */
export const DELEGATION_METADATA_KEY = 'toolstream/delegation';
export const DEFAULT_MAX_DELEGATION_DEPTH = 4;
/** No chain may be allowed deeper than this, whatever a caller asks for. */
const MAX_DEPTH_CEILING = 32;

export interface Delegation {
  /** Agents asked so far on the way here: 0 for a run a user started. */
  depth: number;
  /** The deepest the chain may go; the smallest limit of any agent on the way. */
  maxDepth: number;
}

const wholeNumber = (v: unknown, min: number, max: number): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;

/** A whole number at least `min`; past the ceiling counts as the ceiling (a huge depth must not read as none). */
const atLeast = (v: unknown, min: number): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= min ? Math.min(v, MAX_DEPTH_CEILING) : undefined;

/** The delegation a run was asked under, from its request metadata (none: a user's run). */
export function delegationOf(requestMetadata: unknown, ownMaxDepth: number): Delegation {
  const raw = typeof requestMetadata === 'object' && requestMetadata !== null ? (requestMetadata as Record<string, unknown>)[DELEGATION_METADATA_KEY] : undefined;
  const fields = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const depth = atLeast(fields.depth, 0) ?? 0;
  const asked = atLeast(fields.maxDepth, 1);
  return { depth, maxDepth: Math.min(ownMaxDepth, asked ?? ownMaxDepth) };
}

/** The metadata of the message that delegates one hop further. */
export function nextHopMetadata(current: Delegation): Record<string, unknown> {
  return { [DELEGATION_METADATA_KEY]: { depth: current.depth + 1, maxDepth: current.maxDepth } };
}

export function checkMaxDepth(value: unknown, label: string): number {
  const depth = wholeNumber(value, 1, MAX_DEPTH_CEILING);
  if (depth === undefined) throw new Error(`${label} must be a whole number from 1 to ${MAX_DEPTH_CEILING}, got ${String(value)}`);
  return depth;
}

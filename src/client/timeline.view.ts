/**
 * What a renderer draws, derived from the state: one row per tool in timeline order with its
 * mark, duration and texts. Shared by the web page and the terminal client so both say the same.
 */
import { isTerminalPhase, type TaskPhase } from './stream-event';
import type { TimelineState, ToolCallEntry } from './timeline.reducer';

/** `unfinished`: the task (or the call it is part of) ended but this tool never reported back. */
export type ToolStatus = 'running' | 'completed' | 'failed' | 'unfinished';

export const TOOL_MARKS: Readonly<Record<ToolStatus, string>> = {
  running: '…',
  completed: '✓',
  failed: '✗',
  unfinished: '?',
};

export interface ToolRow {
  toolCallId: string;
  name: string;
  status: ToolStatus;
  mark: string;
  /** Final duration, or time so far while running; absent when a start or end is unknown. */
  durationMs?: number;
  durationText?: string;
  argsText?: string;
  resultText?: string;
  errorText?: string;
  /** How deep it is nested: 0 for the agent's own calls, 1 for a delegated agent's, … */
  depth: number;
  /** The calls made as part of this one (by the agent it delegated to), in timeline order. */
  children: ToolRow[];
  /** Those children split into groups that ran at the same time, as `groups` is for the top level. */
  childGroups: ToolRow[][];
  entry: ToolCallEntry;
}

export interface TimelineView {
  /** Every row in tree order: each call followed by the calls nested under it (see `depth`). */
  rows: ToolRow[];
  /**
   * The top-level rows split into groups of tools that ran at the same time (a renderer sets
   * them side by side); nested rows are in their parent's `children` / `childGroups`.
   */
  groups: ToolRow[][];
  taskState?: TaskPhase;
  narration?: string;
  answer?: string;
  /** Why the task failed / was canceled, when the server said. */
  failureText?: string;
  done: boolean;
  /** Ended in a state other than completed (failed, canceled, rejected). */
  failed: boolean;
}

/** 85 ms, 1.4 s, 2 min 05 s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  return `${minutes} min ${String(seconds).padStart(2, '0')} s`;
}

/** A value as readable JSON (strings as they are). */
export function formatValue(value: unknown, indent = 2): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch {
    return String(value);
  }
}

/** One line, at most `max` characters, for terminals and summaries. */
export function oneLine(value: unknown, max = 80): string {
  const text = formatValue(value, 0).replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function rowOf(entry: ToolCallEntry, state: TimelineState, now: number): ToolRow {
  const status: ToolStatus = entry.phase === 'running' && state.done ? 'unfinished' : entry.phase;
  const row: ToolRow = { toolCallId: entry.toolCallId, name: entry.name, status, mark: TOOL_MARKS[status], depth: 0, children: [], childGroups: [], entry };
  // A running tool's time so far: its start moved onto the client's clock.
  const durationMs =
    entry.durationMs ??
    (status === 'running' && entry.startedAt !== undefined
      ? Math.max(0, now - entry.startedAt - (state.clockOffsetMs ?? 0))
      : undefined);
  if (durationMs !== undefined) {
    row.durationMs = durationMs;
    row.durationText = formatDuration(durationMs);
  }
  if (entry.args !== undefined) row.argsText = formatValue(entry.args);
  if (entry.result !== undefined) row.resultText = formatValue(entry.result);
  if (entry.phase === 'failed') row.errorText = entry.error ?? 'failed';
  return row;
}

/**
 * Groups rows, in timeline order, into runs of overlapping tools: a tool joins the current
 * group when it started before every tool of that group had ended (a parallel turn); a tool
 * whose start was never seen joins a group that is still running. "Before" by the frames'
 * order, which a whole turn within one millisecond leaves clear, or by their timestamps,
 * which a task's snapshot keeps where it lists only each tool's latest frame.
 */
export function parallelGroups(rows: readonly ToolRow[]): ToolRow[][] {
  const groups: ToolRow[][] = [];
  let groupEndOrder = -Infinity;
  let groupEndAt = -Infinity;
  for (const row of rows) {
    const { startOrder, startedAt, endOrder, endedAt } = row.entry;
    const overlaps =
      startOrder === undefined ? groupEndOrder === Infinity : startOrder < groupEndOrder || (startedAt !== undefined && startedAt < groupEndAt);
    if (groups.length === 0 || !overlaps) {
      groups.push([row]);
      groupEndOrder = -Infinity;
      groupEndAt = -Infinity;
    } else {
      groups[groups.length - 1].push(row);
    }
    const running = row.status === 'running';
    groupEndOrder = Math.max(groupEndOrder, running ? Infinity : (endOrder ?? -Infinity));
    groupEndAt = Math.max(groupEndAt, running ? Infinity : (endedAt ?? -Infinity));
  }
  return groups;
}

/** A running row whose parent has ended will get no more news: it is settled as unfinished. */
function settle(row: ToolRow): void {
  if (row.status !== 'running') return;
  row.status = 'unfinished';
  row.mark = TOOL_MARKS.unfinished;
  delete row.durationMs;
  delete row.durationText;
}

/** Whether hanging `row` under `parent` would make it its own ancestor (frames naming each other). */
function closesLoop(row: ToolRow, parent: ToolRow, byId: ReadonlyMap<string, ToolRow>): boolean {
  const seen = new Set<ToolRow>();
  for (let up: ToolRow | undefined = parent; up !== undefined; up = byId.get(up.entry.parentToolCallId ?? '')) {
    if (up === row) return true;
    // A loop above that does not hold `row` is broken at its own members.
    if (seen.has(up)) return false;
    seen.add(up);
  }
  return false;
}

/**
 * Links each row under its parent (a row whose parent is unknown, or that would close a loop,
 * stays at the top level) and lists them in tree order with their depth.
 */
function nest(all: ToolRow[]): { top: ToolRow[]; rows: ToolRow[] } {
  const byId = new Map(all.map((row) => [row.toolCallId, row]));
  const top: ToolRow[] = [];
  for (const row of all) {
    const parent = row.entry.parentToolCallId === undefined ? undefined : byId.get(row.entry.parentToolCallId);
    if (parent && !closesLoop(row, parent, byId)) parent.children.push(row);
    else top.push(row);
  }
  const rows: ToolRow[] = [];
  const visit = (row: ToolRow, depth: number, parentEnded: boolean): void => {
    row.depth = depth;
    if (parentEnded) settle(row);
    rows.push(row);
    row.childGroups = parallelGroups(row.children);
    for (const child of row.children) visit(child, depth + 1, row.status !== 'running');
  };
  for (const row of top) visit(row, 0, false);
  return { top, rows };
}

/** The view at time `now` (epoch ms on the client's clock; running tools show their time so far). */
export function timelineView(state: TimelineState, now: number): TimelineView {
  const all: ToolRow[] = [];
  for (const entry of state.tools) all.push(rowOf(entry, state, now));
  const { top, rows } = nest(all);
  const failed = isTerminalPhase(state.taskState) && state.taskState !== 'completed';
  const view: TimelineView = { rows, groups: parallelGroups(top), done: state.done, failed };
  if (state.taskState) view.taskState = state.taskState;
  if (state.narration !== undefined) view.narration = state.narration;
  if (state.answer !== undefined) view.answer = state.answer;
  if (failed) view.failureText = state.statusText ?? `the task ended ${state.taskState}`;
  return view;
}

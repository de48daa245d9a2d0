/**
 * Narration: one humanised line per model turn that calls tools, for simple clients that read
 * `status.message` and ignore the tool-call-v1 frames.
 */
import type { TurnToolCall } from '../executor/executor.types';

/** A fixed phrase, or a function of the call (return undefined to fall back to the next rule). */
export type NarrationPhrase = string | ((call: TurnToolCall) => string | undefined);

export interface NarrationOptions {
  /** Exact tool name → phrase. Wins over prefixes. */
  phrases?: Record<string, NarrationPhrase>;
  /** Tool-name prefix → phrase; the longest matching prefix wins. */
  prefixes?: Record<string, NarrationPhrase>;
  /** Tool names that add nothing to the narration (a trailing `*` makes it a prefix). */
  silent?: string[];
  /** Name prefixes of delegation tools, phrased "routing to <target>". */
  delegationPrefixes?: string[];
  /** Argument keys that name a delegation target, tried in order. */
  delegationTargetKeys?: string[];
}

export const DEFAULT_PHRASES: Readonly<Record<string, NarrationPhrase>> = {
  search_docs: 'searching the docs',
  read_doc: 'reading the docs',
  calculator: 'calculating',
  weather: 'checking the weather',
  world_clock: 'checking the clock',
  slow_task: 'working through a slow step',
  web_search: 'searching the web',
};

export const DEFAULT_PREFIXES: Readonly<Record<string, NarrationPhrase>> = {
  search: 'searching',
  calc: 'calculating',
  fetch: 'fetching',
  read: 'reading',
  github_: 'working on GitHub',
};

export const DEFAULT_DELEGATION_PREFIXES: readonly string[] = ['route_to', 'transfer_to', 'delegate', 'handoff', 'ask_agent'];
export const DEFAULT_DELEGATION_TARGET_KEYS: readonly string[] = ['target', 'agent', 'agent_name', 'agentName', 'to', 'assignee', 'name'];

function longestPrefixMatch<T>(name: string, table: Readonly<Record<string, T>>): T | undefined {
  let best: string | undefined;
  for (const prefix of Object.keys(table)) {
    if (name.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? undefined : table[best];
}

function apply(phrase: NarrationPhrase | undefined, call: TurnToolCall): string | undefined {
  if (phrase === undefined) return undefined;
  const text = typeof phrase === 'string' ? phrase : phrase(call);
  return text?.trim() || undefined;
}

/** Turns the tool calls of one model turn into a line, or undefined when all are silent. */
export class Narrator {
  private readonly phrases: Record<string, NarrationPhrase>;
  private readonly prefixes: Record<string, NarrationPhrase>;
  private readonly silentNames = new Set<string>();
  private readonly silentPrefixes: string[] = [];
  private readonly delegationPrefixes: readonly string[];
  private readonly targetKeys: readonly string[];

  constructor(options: NarrationOptions = {}) {
    this.phrases = { ...DEFAULT_PHRASES, ...options.phrases };
    this.prefixes = { ...DEFAULT_PREFIXES, ...options.prefixes };
    for (const entry of options.silent ?? []) {
      if (entry.endsWith('*')) this.silentPrefixes.push(entry.slice(0, -1));
      else this.silentNames.add(entry);
    }
    this.delegationPrefixes = options.delegationPrefixes ?? DEFAULT_DELEGATION_PREFIXES;
    this.targetKeys = options.delegationTargetKeys ?? DEFAULT_DELEGATION_TARGET_KEYS;
  }

  isSilent(name: string): boolean {
    return this.silentNames.has(name) || this.silentPrefixes.some((p) => name.startsWith(p));
  }

  /** The phrase for one call (undefined when the tool is silent). */
  phrase(call: TurnToolCall): string | undefined {
    if (this.isSilent(call.name)) return undefined;
    return (
      apply(this.phrases[call.name], call) ??
      apply(longestPrefixMatch(call.name, this.prefixes), call) ??
      this.delegation(call) ??
      `running ${call.name}`
    );
  }

  /** One line for a turn: phrases de-duplicated in call order, joined with "; ". */
  narrate(calls: readonly TurnToolCall[]): string | undefined {
    const seen = new Set<string>();
    for (const call of calls) {
      const text = this.phrase(call);
      if (text) seen.add(text);
    }
    return seen.size > 0 ? [...seen].join('; ') : undefined;
  }

  private delegation(call: TurnToolCall): string | undefined {
    const prefix = this.delegationPrefixes.find((p) => call.name.startsWith(p));
    if (prefix === undefined) return undefined;
    const args = call.args;
    if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
      for (const key of this.targetKeys) {
        const target = (args as Record<string, unknown>)[key];
        if (typeof target === 'string' && target.trim()) return `routing to ${target.trim()}`;
      }
    }
    // transfer_to_quinn → quinn
    const fromName = call.name.slice(prefix.length).replace(/^[_\-.]+/, '');
    return fromName ? `routing to ${fromName}` : undefined;
  }
}

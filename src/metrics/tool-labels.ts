/** The `tool` label of every tool name that is not a registered one. */
export const OTHER_TOOL_LABEL = '_other';

/**
 * Label values for tool names, bounded by construction: a registered tool's name is its own
 * label, anything else (a name a model made up, a typo) is folded into OTHER_TOOL_LABEL, so a
 * model cannot grow the number of series.
 */
export class ToolLabels {
  private readonly known: ReadonlySet<string>;

  constructor(names: Iterable<string>) {
    this.known = new Set([...names].filter((name) => typeof name === 'string' && name.length > 0));
  }

  label(name: string): string {
    return this.known.has(name) ? name : OTHER_TOOL_LABEL;
  }

  /** Every value `label` can return. */
  values(): string[] {
    return [...this.known, OTHER_TOOL_LABEL];
  }
}

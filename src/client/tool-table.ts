/**
 * An immutable, ordered table of tool-call entries whose updates cost O(√n)-ish, not O(n):
 * entries live in chunks of 64 (an update copies one chunk and the short list of chunks), and
 * the id → position index is shared, append-only, by the tables of one lineage. A position
 * below a table's size means the same id for every table sharing the index; a table that
 * appends after another table already grew the lineage (a fork) takes its own copy first.
 * So a reducer can keep every past state intact at a per-frame cost that stays flat.
 */
import type { ToolCallEntry } from './timeline.reducer';

const CHUNK_BITS = 6;
const CHUNK = 1 << CHUNK_BITS;

interface Lineage {
  index: Map<string, number>;
  /** How many positions the index holds. */
  count: number;
}

export class ToolTable implements Iterable<ToolCallEntry> {
  static readonly empty = new ToolTable([], 0, undefined);

  private constructor(
    private readonly chunks: ReadonlyArray<readonly ToolCallEntry[]>,
    /** Number of tool calls. */
    readonly size: number,
    private readonly lineage: Lineage | undefined,
  ) {}

  private position(toolCallId: string): number | undefined {
    const pos = this.lineage?.index.get(toolCallId);
    return pos !== undefined && pos < this.size ? pos : undefined;
  }

  get(toolCallId: string): ToolCallEntry | undefined {
    const pos = this.position(toolCallId);
    return pos === undefined ? undefined : this.chunks[pos >> CHUNK_BITS][pos & (CHUNK - 1)];
  }

  has(toolCallId: string): boolean {
    return this.position(toolCallId) !== undefined;
  }

  /** A table with `entry` in place of the one with its id, or appended last when new. */
  set(entry: ToolCallEntry): ToolTable {
    const pos = this.position(entry.toolCallId);
    if (pos !== undefined) {
      const c = pos >> CHUNK_BITS;
      const chunk = this.chunks[c].slice();
      chunk[pos & (CHUNK - 1)] = entry;
      const chunks = this.chunks.slice();
      chunks[c] = chunk;
      return new ToolTable(chunks, this.size, this.lineage);
    }
    const lineage = this.lineage && this.lineage.count === this.size ? this.lineage : this.fork();
    lineage.index.set(entry.toolCallId, this.size);
    lineage.count = this.size + 1;
    const chunks = this.chunks.slice();
    if (this.size % CHUNK === 0) chunks.push([entry]);
    else chunks[chunks.length - 1] = [...chunks[chunks.length - 1], entry];
    return new ToolTable(chunks, this.size + 1, lineage);
  }

  private fork(): Lineage {
    const index = new Map<string, number>();
    let pos = 0;
    for (const entry of this) index.set(entry.toolCallId, pos++);
    return { index, count: this.size };
  }

  *[Symbol.iterator](): Iterator<ToolCallEntry> {
    for (const chunk of this.chunks) yield* chunk;
  }

  /** The entries in order of first appearance. */
  values(): ToolCallEntry[] {
    return [...this];
  }

  /** The tool call ids in order of first appearance. */
  ids(): string[] {
    return this.values().map((e) => e.toolCallId);
  }
}

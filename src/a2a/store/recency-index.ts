/**
 * Items in the order they were last touched, newest first, read page by page: touching moves an
 * item to the front in O(1) amortised, and a page after a cursor costs a binary search plus the
 * page (not the number of items). Entries left behind by a move are skipped, and compacted away
 * once they outnumber the live ones.
 */
export class RecencyIndex<T> {
  /** Ascending by key; an entry is live while its key is its item's current key. */
  private entries: { item: T; key: number }[] = [];
  private readonly keys = new Map<T, number>();

  constructor(private readonly clock: { next(): number }) {}

  get size(): number {
    return this.keys.size;
  }

  keyOf(item: T): number | undefined {
    return this.keys.get(item);
  }

  touch(item: T): void {
    const key = this.clock.next();
    this.keys.set(item, key);
    this.entries.push({ item, key });
    this.compact();
  }

  remove(item: T): void {
    if (this.keys.delete(item)) this.compact();
  }

  /** Items newest first, starting just below `beforeKey` (a cursor) or at the newest. */
  *newestFirst(beforeKey = Number.POSITIVE_INFINITY): Generator<{ item: T; key: number }> {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid].key < beforeKey) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0; i--) {
      const entry = this.entries[i];
      if (this.keys.get(entry.item) === entry.key) yield entry;
    }
  }

  private compact(): void {
    if (this.entries.length < 1024 || this.entries.length < 2 * this.keys.size) return;
    this.entries = this.entries.filter((entry) => this.keys.get(entry.item) === entry.key);
  }
}

/**
 * Items in the order they were last touched, newest first, read page by page: touching moves an
 * item to the front in O(1) amortised, and a page after a cursor costs a binary search plus the
 * page (not the number of items). Entries left behind by a move are skipped, and compacted away
 * once they outnumber the live ones. The entries are two parallel arrays (items, keys), not an
 * object per touch: every task is touched at each status change, and those objects lived until
 * the next compaction, so the young-generation collector copied and promoted each of them.
 */
export class RecencyIndex<T> {
  /** Ascending by key (`stamps[i]` is the key `items[i]` was touched with); live while it is the item's current key. */
  private items: T[] = [];
  private stamps: number[] = [];
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
    this.items.push(item);
    this.stamps.push(key);
    this.compact();
  }

  remove(item: T): void {
    if (this.keys.delete(item)) this.compact();
  }

  /** Items newest first, starting just below `beforeKey` (a cursor) or at the newest. */
  *newestFirst(beforeKey = Number.POSITIVE_INFINITY): Generator<{ item: T; key: number }> {
    const stamps = this.stamps;
    let lo = 0;
    let hi = stamps.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (stamps[mid] < beforeKey) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0; i--) {
      const item = this.items[i];
      const key = this.stamps[i];
      if (this.keys.get(item) === key) yield { item, key };
    }
  }

  private compact(): void {
    const length = this.stamps.length;
    if (length < 1024 || length < 2 * this.keys.size) return;
    const items: T[] = [];
    const stamps: number[] = [];
    for (let i = 0; i < length; i++) {
      const item = this.items[i];
      if (this.keys.get(item) !== this.stamps[i]) continue;
      items.push(item);
      stamps.push(this.stamps[i]);
    }
    this.items = items;
    this.stamps = stamps;
  }
}

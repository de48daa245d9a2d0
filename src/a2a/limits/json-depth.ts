/**
 * Whether parsed JSON nests deeper than `max` arrays and objects. Iterative, so the check itself
 * cannot overflow the stack that deep input would overflow later (class-transformer, protobuf
 * codecs and every other recursive walk of the request). It walks every request's body: two
 * parallel stacks (the objects, their depths) and no array of values per object, so the walk
 * allocates nothing per node.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const items: object[] = [value];
  const depths: number[] = [1];
  while (items.length > 0) {
    const item = items.pop() as object;
    const depth = depths.pop() as number;
    if (depth > max) return true;
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) {
        const child: unknown = item[i];
        if (typeof child === 'object' && child !== null) {
          items.push(child);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in item) {
      if (!Object.prototype.hasOwnProperty.call(item, key)) continue;
      const child: unknown = (item as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        items.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * Whether parsed JSON nests deeper than `max` arrays and objects. Iterative, so the check itself
 * cannot overflow the stack that deep input would overflow later (class-transformer, protobuf
 * codecs and every other recursive walk of the request).
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

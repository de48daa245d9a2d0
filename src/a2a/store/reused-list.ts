/**
 * Empties a list that is filled and emptied again and again (a replica's tail, a call's batch, a
 * turn's sends), keeping its backing store for the next fill: a new array, or splice(0), leaves a
 * list that the next push grows again (~0.15-0.2 kB of heap each time). A list longer than
 * `keepUpTo` (a backlog) is let go instead, and a new empty one comes back.
 */
export function emptiedForReuse<T>(list: T[], keepUpTo = Number.POSITIVE_INFINITY): T[] {
  if (list.length > keepUpTo) return [];
  // pop, not `length = 0`: V8 frees the backing store of an array whose length is set to 0.
  while (list.length > 0) list.pop();
  return list;
}

/** A node of V8's sampling heap profile (HeapProfiler.stopSampling, or a .heapprofile file). */
export interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/** A sampling heap profile's bytes in all, and the `count` sites (function, file:line) that allocated most themselves, most first. */
export function allocationSites(head: AllocationNode, count = 8): { total: number; top: [string, number][] } {
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: AllocationNode): void => {
    total += node.selfSize;
    if (node.selfSize > 0) {
      const { functionName, url, lineNumber } = node.callFrame;
      const site = `${functionName || '(anonymous)'} ${url.slice(url.lastIndexOf('/') + 1)}:${lineNumber + 1}`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child);
  };
  walk(head);
  return { total, top: [...bySite].sort((a, b) => b[1] - a[1]).slice(0, count) };
}

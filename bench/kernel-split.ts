/**
 * `node -r ts-node/register/transpile-only bench/kernel-split.ts <units> <perf.data>...`
 *
 * What a server's kernel time and page faults are made of, from `perf record -g` files of it
 * (bench/stream-levels.ts `--record=<dir>[,cpu-clock|page-faults]`), in µs or faults per unit
 * (the frames or tasks each recording covered), the main thread and the other threads apart:
 * - a recording on the software clock (`cpu-clock`): every sample whose leaf is in the kernel,
 *   by what the kernel was doing: a page fault; a switch away from the thread (preempted on
 *   the way back to user space, or a futex or epoll wait); a socket write's waking of its
 *   reader (the loopback delivers to the reader's socket inside the writer's call, and
 *   `sock_def_readable` wakes a reader that sleeps in epoll) or the rest of the write; another
 *   system call by name; an interrupt or timer; the rest;
 * - a recording on `page-faults` (`-c 1`: every fault): each fault by what touched the page:
 *   the scavenger copying or promoting an object, the mark-compactor, V8 setting up a new heap
 *   page, the optimising compiler, malloc (with its caller), a JavaScript or runtime allocation.
 * The samples' period says which: nanoseconds on the clock, one per fault. On this VM the
 * clock's samples land where the kernel re-enables interrupts (`pvm_irq_enable`), so a sample's
 * kind comes from its whole kernel chain, not its leaf.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

interface Sample {
  main: boolean;
  period: number;
  event: string;
  /** Symbols, leaf first. */
  kernel: string[];
  user: string[];
}

/** What the kernel was doing in a clock sample (undefined: the sample was in user space). */
export function kernelKind(s: Pick<Sample, 'kernel' | 'user'>): string | undefined {
  if (s.kernel.length === 0) return undefined;
  const chain = s.kernel.join(' ');
  if (/exc_page_fault/.test(chain)) return 'page fault';
  if (/\b__schedule\b|finish_task_switch/.test(chain)) {
    if (/futex/.test(chain)) return 'switch: futex wait';
    if (/epoll/.test(chain)) return 'switch: epoll wait';
    return 'switch: preempted';
  }
  const write = /\bksys_write\b|\bdo_writev\b/.test(chain);
  if (write && /sock_def_readable/.test(chain)) return 'write: waking the reader';
  if (write) return 'write: the rest';
  const call = s.kernel.map((f) => /^__x64_sys_(\w+)/.exec(f)?.[1]).find((c) => c !== undefined);
  if (call) return `system call: ${call}`;
  if (/irq|sysvec|softirq|timer/.test(chain)) return 'interrupts, timers';
  return 'other kernel';
}

/** What touched the page in a page-fault sample. */
export function faultKind(user: string[]): string {
  const chain = user.join(' < ');
  // A new page's header first (the collector takes new pages too): one per 256 KiB page.
  if (/Page::Page|MemoryChunk::MemoryChunk/.test(chain)) return 'V8: a new heap page (its header)';
  if (/Scaveng/.test(chain)) return 'scavenger (copying, promoting)';
  if (/MarkCompact|Evacuat|Sweeper|Marking/.test(chain)) return 'mark-compact';
  if (/compiler::|Maglev|Compil/.test(chain)) return 'compiler';
  if (/malloc|realloc|operator new/.test(user[0] ?? '')) {
    const caller = user.find((f) => !/malloc|realloc|operator new|^\[unknown\]$/.test(f));
    return `malloc < ${caller ?? '?'}`;
  }
  return 'JavaScript or runtime allocation';
}

async function* samples(file: string): AsyncGenerator<Sample> {
  const script = spawn('perf', ['script', '-i', file, '-F', 'pid,tid,period,event,ip,sym,dso'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let current: Sample | undefined;
  for await (const line of createInterface({ input: script.stdout })) {
    const head = /^\s*(\d+)\/(\d+)\s+(\d+)\s+([\w:-]+):/.exec(line);
    if (head) {
      if (current) yield current;
      current = { main: head[1] === head[2], period: Number(head[3]), event: head[4], kernel: [], user: [] };
      continue;
    }
    const frame = /^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$/.exec(line);
    if (!frame || !current) continue;
    const [, symbol, dso] = frame;
    // The kernel's frames come first (leaf first); once user space begins, it is user space.
    if (dso.includes('kernel') && current.user.length === 0) current.kernel.push(symbol);
    else current.user.push(symbol.length > 90 ? `${symbol.slice(0, 90)}…` : symbol);
  }
  if (current) yield current;
}

async function split(file: string, units: number): Promise<void> {
  const byKind = new Map<string, { main: number; others: number }>();
  const total = { main: 0, others: 0 };
  let event = '';
  const add = (kind: string, main: boolean, n: number): void => {
    const entry = byKind.get(kind) ?? { main: 0, others: 0 };
    entry[main ? 'main' : 'others'] += n;
    byKind.set(kind, entry);
  };
  for await (const s of samples(file)) {
    event = s.event;
    if (s.event === 'page-faults') {
      total[s.main ? 'main' : 'others'] += s.period;
      add(faultKind(s.user), s.main, s.period);
      continue;
    }
    total[s.main ? 'main' : 'others'] += s.period;
    const kind = kernelKind(s);
    if (kind) add(kind, s.main, s.period);
  }
  if (event === '') throw new Error(`no samples read from ${file} (perf installed? a perf record file?)`);
  const faults = event === 'page-faults';
  // Faults per 1,000 units; µs of CPU per unit.
  const per = (n: number): string => (faults ? (1000 * n) / units : n / 1000 / units).toFixed(faults ? 2 : 3);
  const kernel = [...byKind.values()].reduce((a, b) => ({ main: a.main + b.main, others: a.others + b.others }), { main: 0, others: 0 });
  console.log(
    faults
      ? `${file}: page faults per 1,000 units (${units}): main thread ${per(total.main)}, other threads ${per(total.others)}`
      : `${file}: µs per unit (${units}) sampled: main thread ${per(total.main)} (kernel ${per(kernel.main)}), other threads ${per(total.others)} (kernel ${per(kernel.others)})`,
  );
  console.log(`| ${faults ? 'what faulted' : 'kernel time'} | main thread | other threads |\n| --- | --- | --- |`);
  for (const [kind, n] of [...byKind].sort((a, b) => b[1].main + b[1].others - (a[1].main + a[1].others))) {
    if (n.main + n.others > 0) console.log(`| ${kind} | ${per(n.main)} | ${per(n.others)} |`);
  }
  console.log('');
}

async function main(): Promise<void> {
  const [unitsArg, ...files] = process.argv.slice(2);
  const units = Number(unitsArg);
  if (!(units > 0) || files.length === 0) throw new Error('usage: bench/kernel-split.ts <units> <perf.data>...');
  for (const file of files) await split(file, units);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

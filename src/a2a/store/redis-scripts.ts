import { createHash } from 'node:crypto';
import { Command, type default as Redis } from 'ioredis';
import { respCommand, respFixedPart, type RespArgument } from './redis-resp';

/** A script call: the number of keys, then the keys, then the arguments (as EVAL takes them). */
export type ScriptCall = (numberOfKeys: number, ...keysThenArgs: (string | number)[]) => Promise<unknown>;

/**
 * A Lua script called by its SHA1 (EVALSHA) on `redis`, as ShaScript.run sends it: the script's
 * text goes to Redis only when Redis does not hold it (after a restart or SCRIPT FLUSH: loaded,
 * and the call sent again), and Redis does not hash it on every call. Some scripts run once or
 * twice per task (admission, queueing, take-over, the follower count, the end). Through
 * ioredis's defineCommand each call made its own argument arrays and their copies, a string of
 * the whole command (the queueing's with the task's snapshot, first event and run) and the
 * closures of two promises: in flight while a hundred tasks start together, they outlived the
 * young generation's collections, and were promoted with the tasks' state (bench/paced-latency.ts
 * --alloc-profile-survivors).
 */
export function defineScript(redis: Redis, lua: string): ScriptCall {
  const script = new ShaScript(redis, lua);
  return (numberOfKeys, ...keysThenArgs) => script.run(numberOfKeys, keysThenArgs);
}

/**
 * An EVALSHA whose RESP bytes were written already (see ShaScript.call): ioredis writes them as
 * they are. Its arguments (the SHA1 and the number of keys) only name it in ioredis's debug log,
 * errors and traces. ioredis's own Script overrides toWritable the same way.
 */
class WrittenEvalsha extends Command {
  /** When the connection's commandTimeout rejects it (performance.now(), whole ms: a small integer needs no heap number); 0 until sent. */
  deadline = 0;
  settled = false;
  /** The promise's own resolve and reject (set by initPromise, while Command's constructor runs: declared, so no field initializer clears them). */
  declare answer: (result: unknown) => void;
  declare fail: (err: Error) => void;

  constructor(
    named: string[],
    private readonly written: Buffer,
    private readonly deadlines: CallDeadlines,
    /** Its reply as a defineCommand script's (bulk strings as UTF-8 strings, by Command's own transformReply), not as Redis gave it. */
    readonly strings = false,
  ) {
    // No arguments and shared options, and `named` (never changed) afterwards: Command copies the
    // arguments it is given (Array.flat, ~150 B per call), and its defaults were a new array and object per call.
    super('evalsha', NO_ARGS, strings ? UTF8_REPLY : NO_OPTIONS);
    this.args = named;
  }

  override toWritable(): Buffer {
    return this.written;
  }

  /**
   * The connection's commandTimeout, as ioredis arms it on every command it sends: one timer
   * for all of this script's calls in flight (CallDeadlines), not a timer per call (its closure,
   * and its removal, which turns the command into a dictionary object: ~0.4 kB of heap per call).
   */
  override setTimeout(ms: number): void {
    // Sent again from ioredis's offline queue: its deadline runs from the first send, as ioredis's own.
    if (this.deadline === 0) this.deadlines.add(this, ms);
  }

  settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.deadlines.settled();
  }
}

const NO_ARGS: never[] = [];
const NO_OPTIONS = {};
/** A defineCommand script's reply encoding. */
const UTF8_REPLY = { replyEncoding: 'utf8' as const };

/**
 * Command's initPromise for these calls (called by Command's constructor): the same promise,
 * settled through `answered` and `failed`, which do what ioredis's resolve and reject would for
 * an EVALSHA (its reply encoding, no error stack option, no timer of its own:
 * see setTimeout), with none of the three closures and their context ioredis's makes per call
 * (its executor, its resolve and its reject: ~0.2 kB of heap per call, measured with a fake
 * connection). Set on the prototype: ioredis's typings declare initPromise private.
 */
function initPromise(this: WrittenEvalsha): void {
  this.promise = new Promise(takeSettlers);
  this.answer = taken.resolve!;
  this.fail = taken.reject!;
  taken.resolve = undefined;
  taken.reject = undefined;
  // ioredis settles a command through these two (its reply, an error, a closed connection, the
  // timeout); the deadlines learn from them that the call is no longer in flight.
  this.resolve = answered;
  this.reject = failed;
}
Object.defineProperty(WrittenEvalsha.prototype, 'initPromise', { value: initPromise, writable: true, configurable: true });

/** The resolve and reject of the promise just made (see takeSettlers), until initPromise takes them. */
const taken: { resolve?: (result: unknown) => void; reject?: (err: Error) => void } = {};

/** One executor for every call's promise (not a closure each). */
function takeSettlers(resolve: (result: unknown) => void, reject: (err: Error) => void): void {
  taken.resolve = resolve;
  taken.reject = reject;
}

function answered(this: WrittenEvalsha, result: unknown): void {
  this.settle();
  this.isResolved = true;
  this.answer(this.strings ? this.transformReply(result as Buffer) : result);
}

function failed(this: WrittenEvalsha, err: Error): void {
  this.settle();
  this.fail(err);
}

/**
 * The commandTimeout of a script's calls in flight, with one timer: calls are answered in the
 * order they were sent on their connection, so they are kept in that order and the settled ones
 * leave from the front; the timer fires at the oldest unsettled call's deadline and rejects every
 * call whose deadline has come, with ioredis's own error. The timer holds the process open only
 * while a call is in flight, as ioredis's per-command timers do.
 */
class CallDeadlines {
  /** The calls in flight from `first` to `end`, oldest first; the slots outside are empty and kept for the next calls. */
  private readonly calls: (WrittenEvalsha | undefined)[] = [];
  private first = 0;
  private end = 0;
  private timer?: NodeJS.Timeout;

  add(call: WrittenEvalsha, ms: number): void {
    call.deadline = Math.ceil(performance.now()) + ms;
    if (this.end < this.calls.length) this.calls[this.end] = call;
    else this.calls.push(call);
    this.end += 1;
    if (this.timer === undefined) this.timer = setTimeout(this.expire, ms);
    else if (!this.timer.hasRef()) this.timer.ref();
  }

  /** A call settled: drops the settled calls at the front. */
  settled(): void {
    const calls = this.calls;
    while (this.first < this.end && calls[this.first]!.settled) calls[this.first++] = undefined;
    if (this.first === this.end) {
      this.first = 0;
      this.end = 0;
      this.timer?.unref();
    } else if (this.first >= 1024 && this.first * 2 >= this.end) {
      calls.copyWithin(0, this.first, this.end);
      calls.fill(undefined, this.end - this.first, this.end);
      this.end -= this.first;
      this.first = 0;
    }
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    // Due within Node's timer granularity (1 ms), as ioredis's own timer would have fired. A call's
    // rejection settles it, which drops it (and the settled calls after it) from the front.
    for (let call = this.calls[this.first]; call !== undefined && call.deadline - now < 1; call = this.calls[this.first]) {
      if (call.settled) this.settled();
      else call.reject(new Error('Command timed out'));
    }
    const next = this.calls[this.first];
    if (next !== undefined) this.timer = setTimeout(this.expire, Math.max(1, next.deadline - now));
  };
}

/**
 * A script's calls (the appender's, one per batch: `call`; the store's other scripts': `run`),
 * each one ioredis Command sent by its SHA1 with the arguments the caller built: none of the
 * per-call objects of a defineCommand script's call (its wrapper's argument arrays and options,
 * the script command's copies of them, the promise that catches NOSCRIPT), about 0.7 kB of heap
 * per call. The command's bytes are written here, in one buffer
 * (see respCommand): ioredis's toWritable made a string per argument and a list of the pieces
 * before joining them, about 0.4 kB of heap per call.
 * When Redis does not hold the script (after a restart or SCRIPT FLUSH) the call fails with
 * NOSCRIPT: `loaded` loads it, and the caller of `call` sends it again (`run` does so itself).
 */
export class ShaScript {
  private readonly sha: string;
  /** What names a call in ioredis's log, errors and traces: the SHA1 and the number of keys (by that number, for run). */
  private readonly named: string[][] = [];
  /** `evalsha <sha1> <number of keys>` in RESP, the start of every `call`. */
  private readonly fixed: Buffer;
  /** `evalsha <sha1>` in RESP, the start of every `run` (its number of keys follows). */
  private readonly shaPart: Buffer;
  private loading?: Promise<unknown>;
  private readonly deadlines = new CallDeadlines();

  /** @param numberOfKeys the number of keys of every `call` (run takes it per call) */
  constructor(
    private readonly redis: Redis,
    private readonly lua: string,
    private readonly numberOfKeys = 0,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
    this.shaPart = respFixedPart(['evalsha', this.sha]);
    this.fixed = respFixedPart(['evalsha', ...this.namedFor(numberOfKeys)]);
  }

  /** EVALSHA of the script with `keys` and `args` (its `numberOfKeys` keys); its reply as Redis gave it (bulk strings as Buffers). */
  call(keys: readonly (string | Buffer)[], args: readonly (string | Buffer)[]): Promise<unknown> {
    return this.send(respCommand(this.fixed, 3, keys, args), this.numberOfKeys);
  }

  /**
   * EVALSHA of the script, as a defineCommand script's call (see defineScript): the number of
   * keys, then the keys and the arguments (numbers written as ioredis writes them), in the same
   * bytes; its reply as ioredis gives it (bulk strings as UTF-8 strings). When Redis does not hold
   * the script (NOSCRIPT: nothing ran), it is loaded and the same bytes are sent again, once.
   */
  run(numberOfKeys: number, keysThenArgs: readonly RespArgument[]): Promise<unknown> {
    const written = respCommand(this.shaPart, 2, [numberOfKeys], keysThenArgs);
    return this.send(written, numberOfKeys, true).catch((err: unknown) => {
      const loaded = this.loaded(err);
      if (!loaded) throw err;
      return loaded.then(() => this.send(written, numberOfKeys, true));
    });
  }

  private send(written: Buffer, numberOfKeys: number, strings = false): Promise<unknown> {
    const command = new WrittenEvalsha(this.namedFor(numberOfKeys), written, this.deadlines, strings);
    void this.redis.sendCommand(command);
    return command.promise;
  }

  private namedFor(numberOfKeys: number): string[] {
    return (this.named[numberOfKeys] ??= [this.sha, String(numberOfKeys)]);
  }

  /** After a call failed with `err`: when Redis lacked the script (NOSCRIPT), a promise that resolves once it holds it; else undefined. */
  loaded(err: unknown): Promise<unknown> | undefined {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) return undefined;
    this.loading ??= this.redis.script('LOAD', this.lua).finally(() => (this.loading = undefined));
    return this.loading;
  }
}


/**
 * Tasks per call of a script that renews the leases or slots of every task an instance holds.
 * Such a script runs a few commands per task, and Redis runs nothing else meanwhile; the
 * instance's appends, which share its connection, wait behind it too (about 0.4-0.7 ms per 100
 * tasks, 3-8 ms at 1,000). In calls of this many, one after the other, what the instance sent
 * in between goes first.
 */
export const RENEWED_PER_CALL = 64;

/** Runs `renew` on `ids` in slices of RENEWED_PER_CALL, each once the one before has answered; resolves what they returned, in order. */
export async function inSlices<T>(ids: readonly string[], renew: (slice: string[]) => Promise<T[]>): Promise<T[]> {
  const all: T[] = [];
  for (let from = 0; from < ids.length; from += RENEWED_PER_CALL) all.push(...(await renew(ids.slice(from, from + RENEWED_PER_CALL))));
  return all;
}

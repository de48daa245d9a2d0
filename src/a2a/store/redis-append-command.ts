import { createHash } from 'node:crypto';
import Redis, { Command } from 'ioredis';

/**
 * An EVALSHA of a script whose SHA1 is `sha`, written to the socket as one buffer that holds the
 * whole command (RESP: `*<count>`, then per argument `$<bytes>` and the bytes).
 *
 * ioredis's own script call (defineCommand) makes per call an array of the arguments three
 * times over, an options object, a second promise for its NOSCRIPT fallback with a closure, and
 * while writing two to five strings per argument and a list of the pieces: about 1.5 kB of heap
 * per call that the appender makes for every batch (see RedisTaskStore's appendCall). Here the
 * arguments are the caller's own array, and the bytes go straight into the buffer.
 */
export class EvalShaCommand extends Command {
  constructor(
    private readonly sha: string,
    private readonly scriptKeys: readonly Buffer[],
    private readonly scriptArgs: readonly (string | Buffer)[],
  ) {
    // No arguments for ioredis to copy and convert: toWritable writes them.
    super('evalsha', [], { replyEncoding: 'utf8' });
  }

  override toWritable(): Buffer {
    const count = 3 + this.scriptKeys.length + this.scriptArgs.length;
    const keyCount = this.scriptKeys.length;
    let bytes = 1 + digits(count) + 2 + bulkSize(EVALSHA) + bulkSize(this.sha) + 1 + digits(digits(keyCount)) + 2 + digits(keyCount) + 2;
    for (const key of this.scriptKeys) bytes += bulkSize(key);
    for (const arg of this.scriptArgs) bytes += bulkSize(arg);
    const buffer = Buffer.allocUnsafe(bytes);
    buffer[0] = STAR;
    let offset = writeCrlf(buffer, writeDecimal(buffer, 1, count));
    offset = writeBulk(buffer, offset, EVALSHA);
    offset = writeBulk(buffer, offset, this.sha);
    buffer[offset] = DOLLAR;
    offset = writeCrlf(buffer, writeDecimal(buffer, offset + 1, digits(keyCount)));
    offset = writeCrlf(buffer, writeDecimal(buffer, offset, keyCount));
    for (const key of this.scriptKeys) offset = writeBulk(buffer, offset, key);
    for (const arg of this.scriptArgs) offset = writeBulk(buffer, offset, arg);
    return buffer;
  }
}

/** The SHA1 that EVALSHA names `lua` by (hex, as SCRIPT LOAD answers it). */
export function scriptSha(lua: string): string {
  return createHash('sha1').update(lua).digest('hex');
}

/**
 * Whether EvalShaCommand may go to `redis` as it is: a single Redis (a cluster routes a command
 * by its keys, which it reads from the arguments) without a key prefix of ioredis's own (which
 * it adds to the keys in the arguments).
 */
export function takesEvalShaCommand(redis: Redis): boolean {
  return redis instanceof Redis && !redis.options.keyPrefix;
}

/** Redis does not have the script (a restart, SCRIPT FLUSH, a fail-over to a replica that never ran it). */
export function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.includes('NOSCRIPT');
}

const EVALSHA = 'evalsha';
const STAR = 0x2a;
const DOLLAR = 0x24;
const CR = 0x0d;
const LF = 0x0a;
const ZERO = 0x30;

function bulkSize(arg: string | Buffer): number {
  const length = typeof arg === 'string' ? Buffer.byteLength(arg) : arg.length;
  return 1 + digits(length) + 2 + length + 2;
}

function writeBulk(buffer: Buffer, offset: number, arg: string | Buffer): number {
  buffer[offset] = DOLLAR;
  if (typeof arg === 'string') {
    offset = writeCrlf(buffer, writeDecimal(buffer, offset + 1, Buffer.byteLength(arg)));
    offset += buffer.write(arg, offset, 'utf8');
  } else {
    offset = writeCrlf(buffer, writeDecimal(buffer, offset + 1, arg.length));
    offset += arg.copy(buffer, offset);
  }
  return writeCrlf(buffer, offset);
}

function writeCrlf(buffer: Buffer, offset: number): number {
  buffer[offset] = CR;
  buffer[offset + 1] = LF;
  return offset + 2;
}

/** Writes a whole number ≥ 0 in decimal, without making its string. */
function writeDecimal(buffer: Buffer, offset: number, n: number): number {
  const end = offset + digits(n);
  let at = end;
  do {
    buffer[--at] = ZERO + (n % 10);
    n = Math.floor(n / 10);
  } while (n > 0);
  return end;
}

/** The decimal digits of a whole number ≥ 0. */
export function digits(n: number): number {
  let count = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    count += 1;
  }
  return count;
}

/** Writing numbers and commands in Redis's wire format (RESP) straight into a buffer, with no string made on the way. */

const DIGIT_ZERO = 0x30;
const CR = 0x0d;
const LF = 0x0a;
const ASTERISK = 0x2a;
const DOLLAR = 0x24;

/** The decimal digits of a whole number. */
export function decimalDigits(n: number): number {
  let count = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    count += 1;
  }
  return count;
}

/** Writes a whole number's decimal digits at `offset`; returns the offset after them. */
export function writeDecimal(buffer: Buffer, offset: number, n: number): number {
  const end = offset + decimalDigits(n);
  let at = end;
  do {
    buffer[--at] = DIGIT_ZERO + (n % 10);
    n = Math.floor(n / 10);
  } while (n > 0);
  return end;
}

/** A command's argument: a number goes as ioredis sends it, as the text String() makes of it. */
export type RespArgument = string | Buffer | number;

/** A whole number written as digits with no string made (String() gives the same text for these). */
function isDigits(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** The bytes of one argument as a bulk string: `$<length>\r\n<bytes>\r\n`. */
function bulkLength(part: RespArgument): number {
  if (typeof part === 'number' && !isDigits(part)) part = String(part);
  const length = typeof part === 'number' ? decimalDigits(part) : typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  return 1 + decimalDigits(length) + 2 + length + 2;
}

function writeBulk(buffer: Buffer, offset: number, part: RespArgument): number {
  if (typeof part === 'number' && !isDigits(part)) part = String(part);
  const length = typeof part === 'number' ? decimalDigits(part) : typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  buffer[offset++] = DOLLAR;
  offset = writeDecimal(buffer, offset, length);
  buffer[offset++] = CR;
  buffer[offset++] = LF;
  if (typeof part === 'number') offset = writeDecimal(buffer, offset, part);
  else offset += typeof part === 'string' ? buffer.write(part, offset, 'utf8') : part.copy(buffer, offset);
  buffer[offset++] = CR;
  buffer[offset++] = LF;
  return offset;
}

/** The leading arguments of a command that never change (its name, a script's SHA1...), as RESP bulk strings, to pass to respCommand. */
export function respFixedPart(parts: readonly string[]): Buffer {
  const buffer = Buffer.allocUnsafe(parts.reduce((sum, part) => sum + bulkLength(part), 0));
  let offset = 0;
  for (const part of parts) offset = writeBulk(buffer, offset, part);
  return buffer;
}

/**
 * A whole command in RESP (the array header, then every argument as a bulk string), in one
 * buffer: `fixed` (from respFixedPart, `fixedCount` arguments), then those of `first`, then
 * those of `second`. The same bytes as ioredis writes for these arguments.
 */
export function respCommand(fixed: Buffer, fixedCount: number, first: readonly RespArgument[], second: readonly RespArgument[]): Buffer {
  const count = fixedCount + first.length + second.length;
  let bytes = 1 + decimalDigits(count) + 2 + fixed.length;
  for (const part of first) bytes += bulkLength(part);
  for (const part of second) bytes += bulkLength(part);
  const buffer = Buffer.allocUnsafe(bytes);
  buffer[0] = ASTERISK;
  let offset = writeDecimal(buffer, 1, count);
  buffer[offset++] = CR;
  buffer[offset++] = LF;
  offset += fixed.copy(buffer, offset);
  for (const part of first) offset = writeBulk(buffer, offset, part);
  for (const part of second) offset = writeBulk(buffer, offset, part);
  return buffer;
}

import { Command } from 'ioredis';
import { decimalDigits, respCommand, respFixedPart, writeDecimal } from './redis-resp';

/** What ioredis itself writes for the command (its toWritable, the bytes our command replaces). */
function ioredisBytes(name: string, args: (string | Buffer)[]): Buffer {
  const written = new Command(name, args).toWritable({});
  return Buffer.isBuffer(written) ? written : Buffer.from(written);
}

describe('RESP writing', () => {
  it('writes whole numbers in decimal, of any length', () => {
    for (const n of [0, 7, 9, 10, 99, 100, 12_345, 1_733_400_000_000, Number.MAX_SAFE_INTEGER]) {
      const buffer = Buffer.alloc(decimalDigits(n) + 2, '#');
      expect(writeDecimal(buffer, 1, n)).toBe(1 + String(n).length);
      expect(buffer.toString('latin1')).toBe(`#${n}#`);
    }
  });

  it('writes a command byte for byte as ioredis does, whatever its arguments hold (multi-byte text, CR LF, empty, large)', () => {
    const sha = 'a'.repeat(40);
    const fixed = respFixedPart(['evalsha', sha, '3']);
    const keys = [Buffer.from('toolstream:task:t-1'), Buffer.from('toolstream:events:t-1'), 'toolstream:owner:é 🙂'];
    const cases: (string | Buffer)[][] = [
      [Buffer.from('12 TASK_STATE_WORKING 5\n1 t- {"a":"b"}')],
      [Buffer.from('payload'), 'member', Buffer.alloc(0), ''],
      ['line\r\none — é 🙂', Buffer.from('x'.repeat(70_000))],
      [],
    ];
    for (const args of cases) {
      expect(respCommand(fixed, 3, keys, args).equals(ioredisBytes('evalsha', [sha, '3', ...keys, ...args]))).toBe(true);
    }
  });
});

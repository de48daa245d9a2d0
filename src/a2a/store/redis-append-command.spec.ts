import { Command } from 'ioredis';
import { EvalShaCommand, scriptSha } from './redis-append-command';

/** What ioredis itself writes for the same EVALSHA (its bytes: in buffer mode a Buffer, else a string). */
function ioredisBytes(sha: string, keys: Buffer[], args: (string | Buffer)[]): Buffer {
  const written = new Command('evalsha', [sha, keys.length, ...keys, ...args]).toWritable(undefined as never);
  return Buffer.isBuffer(written) ? written : Buffer.from(written);
}

describe('EvalShaCommand', () => {
  const sha = scriptSha('return 1');
  const keys = [Buffer.from('t:task'), Buffer.from('t:events'), Buffer.from('t:owner')];

  it('names a script by the SHA1 that SCRIPT LOAD answers', () => {
    // sha1("return 1"), as `redis-cli SCRIPT LOAD "return 1"` prints it.
    expect(sha).toBe('e0e1f9fabfc9d4800c877a703b823ac0578ff8db');
  });

  it.each([
    ['buffers and ASCII strings', [Buffer.from('lease-1'), '1000 TASK_STATE_WORKING 1000 12 0 1 -', Buffer.from('t:channel'), Buffer.from('\n12 t- {"a":1}')]],
    ['multi-byte text, an empty string and an empty buffer', [Buffer.alloc(0), 'é — 🙂 "quoted"\r\n', '', Buffer.from('x'.repeat(10_000))]],
    ['twelve arguments (a two-digit count)', Array.from({ length: 12 }, (_, i) => `arg ${i} ${'y'.repeat(i * 11)}`)],
  ])('writes the command byte for byte as ioredis does: %s', (_name, args) => {
    const written = new EvalShaCommand(sha, keys, args).toWritable();
    expect(written.equals(ioredisBytes(sha, keys, args))).toBe(true);
  });
});

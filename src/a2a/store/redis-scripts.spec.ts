import { createHash } from 'node:crypto';
import { Command, ReplyError, type default as Redis } from 'ioredis';
import { defineScript, inSlices, RENEWED_PER_CALL, ShaScript } from './redis-scripts';

describe('inSlices', () => {
  it('calls with at most RENEWED_PER_CALL ids, each call once the one before has answered, and returns what they returned in order', async () => {
    const ids = Array.from({ length: RENEWED_PER_CALL * 2 + 5 }, (_, i) => `t${i}`);
    const calls: string[][] = [];
    let inFlight = 0;
    let most = 0;
    const result = await inSlices(ids, async (slice) => {
      calls.push(slice);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      return slice.filter((id) => id.endsWith('3'));
    });
    expect(calls.map((slice) => slice.length)).toEqual([RENEWED_PER_CALL, RENEWED_PER_CALL, 5]);
    expect(calls.flat()).toEqual(ids);
    expect(most).toBe(1);
    expect(result).toEqual(ids.filter((id) => id.endsWith('3')));
    expect(await inSlices([], async () => ['never'])).toEqual([]);
  });
});

describe('ShaScript calls and the connection\'s commandTimeout', () => {
  /** A connection as ShaScript uses it: sendCommand arms the command's timeout, as ioredis does with commandTimeout set; the test answers. */
  function connection(timeoutMs: number): { redis: Redis; sent: Command[] } {
    const sent: Command[] = [];
    const sendCommand = (command: Command): Promise<unknown> => {
      command.setTimeout(timeoutMs);
      sent.push(command);
      return command.promise;
    };
    return { redis: { sendCommand } as unknown as Redis, sent };
  }

  it('answers thousands of calls in flight, answered in order while more are sent or out of order, and times out only those left unanswered', async () => {
    const { redis, sent } = connection(200);
    const script = new ShaScript(redis, 'return 1', 0);
    const outcomes: Promise<unknown>[] = [];
    for (let i = 0; i < 3_000; i++) {
      outcomes.push(script.call([], []).catch((err: unknown) => String(err)));
      // Answered in the order sent while later calls still go out: the answered front leaves the deadlines' list in steps.
      if (i >= 1_500) sent[i - 1_500].resolve(i - 1_500);
    }
    for (let at = 1_500; at < 2_400; at++) sent[at].resolve(at);
    // Answered ahead of calls still in flight (a reply after its own timeout, or an error ioredis gave it).
    sent[2_500].resolve(2_500);
    const results = await Promise.all(outcomes);
    const expected = results.map((_, at) => (at < 2_400 || at === 2_500 ? at : 'Error: Command timed out'));
    expect(results).toEqual(expected);
    // The list empty again, the next call goes as the first did.
    const next = script.call([], []);
    sent[3_000].resolve('again');
    expect(await next).toBe('again');
  });

  it("settles each call's promise as ioredis's own command would: its reply as it came, or the connection's error object itself", async () => {
    const { redis, sent } = connection(60_000);
    const script = new ShaScript(redis, 'return 1', 2);
    const answered = script.call(['k1', Buffer.from('k2')], ['a']);
    const failed = script.call(['k1', 'k2'], []).then(
      () => 'answered',
      (err: unknown) => err,
    );
    const closed = new Error('Connection is closed.');
    const reply = Buffer.from('1');
    sent[0].resolve(reply);
    sent[1].reject(closed);
    expect(await answered).toBe(reply);
    expect(sent[0].isResolved).toBe(true);
    expect(await failed).toBe(closed);
    // Named in ioredis's log, errors and traces by the SHA1 and the number of keys; written as given.
    expect(sent[0].name).toBe('evalsha');
    expect(sent[0].args).toEqual([expect.stringMatching(/^[0-9a-f]{40}$/), '2']);
    expect(sent[0].toWritable(undefined as never).toString()).toBe(`*6\r\n$7\r\nevalsha\r\n$40\r\n${sent[0].args[0] as string}\r\n$1\r\n2\r\n$2\r\nk1\r\n$2\r\nk2\r\n$1\r\na\r\n`);
  });
});

describe('defineScript: a script called as ioredis\'s defineCommand called it, from bytes written once', () => {
  const lua = "return {redis.call('HGETALL', KEYS[1]), ARGV[1]}";
  const sha = createHash('sha1').update(lua).digest('hex');

  /** A connection that keeps what was sent (sendCommand) and the scripts loaded (SCRIPT LOAD); the test answers. */
  function connection(): { redis: Redis; sent: Command[]; loads: string[] } {
    const sent: Command[] = [];
    const loads: string[] = [];
    const sendCommand = (command: Command): Promise<unknown> => {
      sent.push(command);
      return command.promise;
    };
    const script = async (subcommand: string, text: string): Promise<string> => {
      loads.push(`${subcommand} ${text}`);
      return sha;
    };
    return { redis: { sendCommand, script } as unknown as Redis, sent, loads };
  }

  it("sends the bytes ioredis's EVALSHA of the same arguments has (numbers as their text), and hands the reply over as ioredis does (bulk strings as strings, nested too)", async () => {
    const { redis, sent } = connection();
    const call = defineScript(redis, lua);
    const reply = call(2, 'toolstream:task:é1', 'k2', 'a b', 1733400000123, 0, 2.5, -3, '');
    const expected = new Command('evalsha', [sha, 2, 'toolstream:task:é1', 'k2', 'a b', 1733400000123, 0, 2.5, -3, '']).toWritable(undefined as never);
    expect(sent[0].toWritable(undefined as never)).toEqual(Buffer.from(expected as string));
    sent[0].resolve([[Buffer.from('id'), Buffer.from('é1')], null, 7, Buffer.from('')]);
    expect(await reply).toEqual([['id', 'é1'], null, 7, '']);
  });

  it('on NOSCRIPT loads the script, sends the same bytes again once, and answers with that reply; other errors reach the caller as they came', async () => {
    const { redis, sent, loads } = connection();
    const call = defineScript(redis, lua);
    const reply = call(1, 'k', 'v');
    sent[0].reject(new ReplyError('NOSCRIPT No matching script. Please use EVAL.'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(loads).toEqual([`LOAD ${lua}`]);
    expect(sent).toHaveLength(2);
    expect(sent[1].toWritable(undefined as never)).toEqual(sent[0].toWritable(undefined as never));
    sent[1].resolve(Buffer.from('ok'));
    expect(await reply).toBe('ok');

    // A second NOSCRIPT (the script flushed again meanwhile) is the caller's, as is any other error.
    const again = call(1, 'k', 'v').catch((err: unknown) => err);
    sent[2].reject(new ReplyError('NOSCRIPT No matching script. Please use EVAL.'));
    await new Promise((resolve) => setImmediate(resolve));
    sent[3].reject(new ReplyError('NOSCRIPT No matching script. Please use EVAL.'));
    expect(String(await again)).toContain('NOSCRIPT');
    const wrongType = new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value');
    const failed = call(1, 'k', 'v').catch((err: unknown) => err);
    sent[4].reject(wrongType);
    expect(await failed).toBe(wrongType);
    expect(sent).toHaveLength(5);
    expect(loads).toHaveLength(2);
  });
});

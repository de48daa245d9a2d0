import { ValidationPipe } from '@nestjs/common';
import { JsonRpcRequestError } from '../a2a-errors';
import { A2aValidationPipe } from './a2a-validation.pipe';
import { SendMessageRequestDto } from './send-message.dto';
import { isCommonSendMessageRequest } from './send-message.shape';
import { MessageSendParamsV03Dto } from './send-message-v03.dto';
import { GetTaskRequestDto, ListTasksRequestDto } from './task-requests.dto';

const pipe = new A2aValidationPipe();

async function violations(value: unknown, metatype: new () => object): Promise<{ field: string; description: string }[]> {
  try {
    await pipe.transform(value, { type: 'body', metatype });
  } catch (err) {
    expect(err).toBeInstanceOf(JsonRpcRequestError);
    expect((err as JsonRpcRequestError).code).toBe(-32602);
    return (err as JsonRpcRequestError).fieldViolations;
  }
  throw new Error('expected a validation error');
}

const fields = async (value: unknown, metatype: new () => object) => (await violations(value, metatype)).map((v) => v.field);

describe('A2aValidationPipe (invalid params name the field)', () => {
  it('accepts a well-formed 1.0 SendMessageRequest', async () => {
    const body = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }, { data: { a: 1 } }] }, configuration: { historyLength: 2 } };
    await expect(pipe.transform(body, { type: 'body', metatype: SendMessageRequestDto })).resolves.toMatchObject(body);
  });

  it.each([
    [{}, ['message']],
    [{ message: 'hi' }, ['message']],
    [{ message: { role: 'ROLE_USER', parts: [{ text: 'x' }] } }, ['message.messageId']],
    [{ message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] } }, ['message.role']],
    [{ message: { messageId: 'm', role: 'ROLE_USER', parts: [] } }, ['message.parts']],
    [{ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x', data: {} }] } }, ['message.parts']],
    [{ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 7 }] } }, ['message.parts[0].text']],
    [{ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ raw: 'not base64!' }] } }, ['message.parts[0].raw']],
    [{ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] }, configuration: { historyLength: -1 } }, ['configuration.historyLength']],
  ])('%j is invalid at %j', async (body, expected) => {
    expect(await fields(body, SendMessageRequestDto)).toEqual(expected);
  });

  it('says which part breaks the oneof', async () => {
    const [violation] = await violations({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'ok' }, {}] } }, SendMessageRequestDto);
    expect(violation.description).toBe('parts[1] must have exactly one of text, raw, url, data (it has none)');
  });

  it('checks 0.3 MessageSendParams by kind', async () => {
    const ok = { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } };
    await expect(pipe.transform(ok, { type: 'body', metatype: MessageSendParamsV03Dto })).resolves.toBeDefined();
    expect(await fields({ message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text' }] } }, MessageSendParamsV03Dto)).toEqual([
      'message.parts[0].text',
    ]);
    expect(
      await fields({ message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'file', file: { bytes: 'aGk=', uri: 'u' } }] } }, MessageSendParamsV03Dto),
    ).toEqual(['message.parts[0].file']);
    expect(await fields({ message: { kind: 'task', messageId: 'm', role: 'user', parts: [{ kind: 'video' }] } }, MessageSendParamsV03Dto)).toEqual([
      'message.kind',
      'message.parts[0].kind',
    ]);
  });

  it('converts query strings for ListTasks and rejects out-of-range values with their field', async () => {
    await expect(
      pipe.transform({ pageSize: '10', includeArtifacts: 'true', historyLength: '0' }, { type: 'query', metatype: ListTasksRequestDto }),
    ).resolves.toMatchObject({ pageSize: 10, includeArtifacts: true, historyLength: 0 });
    expect(
      await fields({ pageSize: '150', historyLength: '-5', status: 'TASK_STATE_RUNNING', statusTimestampAfter: 'yesterday' }, ListTasksRequestDto),
    ).toEqual(['status', 'pageSize', 'historyLength', 'statusTimestampAfter']);
  });

  it('rejects numbers that are objects (even ones whose toString is not a function) as invalid, never throwing', async () => {
    const hostile = JSON.parse('{"toString":1,"valueOf":{}}') as unknown;
    expect(await fields({ id: 'x', historyLength: hostile }, GetTaskRequestDto)).toEqual(['historyLength']);
    expect(await fields({ pageSize: hostile, historyLength: [] }, ListTasksRequestDto)).toEqual(['pageSize', 'historyLength']);
    expect(await fields({ pageSize: '' }, ListTasksRequestDto)).toEqual(['pageSize']);
  });

  it('gives one violation per field, all its constraints in one description', async () => {
    expect(await violations({ historyLength: 2 }, GetTaskRequestDto)).toEqual([
      { field: 'id', description: 'id should not be empty, id must be a string' },
    ]);
  });

  it('rejects an array or a primitive where an object belongs', async () => {
    expect(await fields([1, 2], GetTaskRequestDto)).toEqual(['id']);
    expect(await fields('id', GetTaskRequestDto)).toEqual(['id']);
  });

  describe('the hand check that skips the class-validator pass for common sends', () => {
    const message = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] };
    const common: unknown[] = [
      { message },
      { message: { ...message, parts: [{ text: 'hi', metadata: { a: 1 }, mediaType: 'text/plain', filename: 'f' }, { data: { a: [1] } }, { data: 0 }] } },
      { message: { ...message, contextId: 'c', taskId: 't', metadata: {}, extensions: ['x'], referenceTaskIds: [] }, metadata: { k: 'v' }, tenant: 't' },
      { message, unknownField: 1 },
    ];
    /** Near misses, valid or not: each takes the full pass (and so gets its field errors). */
    const others: unknown[] = [
      null,
      [],
      {},
      { message, configuration: {} },
      { message, tenant: 1 },
      { message, metadata: [] },
      { message: { ...message, messageId: '' } },
      { message: { ...message, messageId: 1 } },
      { message: { ...message, role: 'ROLE_AGENT' } },
      { message: { ...message, parts: [] } },
      { message: { ...message, parts: 'hi' } },
      { message: { ...message, parts: [{ text: 'x', data: {} }] } },
      { message: { ...message, parts: [{}] } },
      { message: { ...message, parts: [{ text: 7 }] } },
      { message: { ...message, parts: [{ text: null }] } },
      { message: { ...message, parts: [{ data: null }] } },
      { message: { ...message, parts: [{ raw: 'aGk=' }] } },
      { message: { ...message, parts: [{ url: 'https://example.com' }] } },
      { message: { ...message, parts: [{ text: 'x', metadata: 'm' }] } },
      { message: { ...message, parts: [{ text: 'x', filename: 2 }] } },
      { message: { ...message, parts: ['x'] } },
      { message: { ...message, contextId: 5 } },
      { message: { ...message, taskId: null } },
      { message: { ...message, metadata: [] } },
      { message: { ...message, extensions: ['a', 1] } },
      { message: { ...message, referenceTaskIds: 'r' } },
    ];
    const fullPass = new ValidationPipe({ transform: true });

    it.each(common)('accepts %j, which the full pass accepts too, and returns it as it is', async (body) => {
      expect(isCommonSendMessageRequest(body)).toBe(true);
      await expect(fullPass.transform(body, { type: 'body', metatype: SendMessageRequestDto })).resolves.toBeInstanceOf(SendMessageRequestDto);
      await expect(pipe.transform(body, { type: 'body', metatype: SendMessageRequestDto })).resolves.toBe(body);
    });

    it.each(others)('leaves %j to the full pass', (body) => {
      expect(isCommonSendMessageRequest(body)).toBe(false);
    });
  });
});

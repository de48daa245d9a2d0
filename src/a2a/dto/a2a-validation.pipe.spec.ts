import { JsonRpcRequestError } from '../a2a-errors';
import { A2aValidationPipe } from './a2a-validation.pipe';
import { SendMessageRequestDto } from './send-message.dto';
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

  it('gives one violation per field, all its constraints in one description', async () => {
    expect(await violations({ historyLength: 2 }, GetTaskRequestDto)).toEqual([
      { field: 'id', description: 'id should not be empty, id must be a string' },
    ]);
  });

  it('rejects an array or a primitive where an object belongs', async () => {
    expect(await fields([1, 2], GetTaskRequestDto)).toEqual(['id']);
    expect(await fields('id', GetTaskRequestDto)).toEqual(['id']);
  });
});

import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { Message, Role } from '@a2a-js/sdk';
import { JsonRpcRequestError } from './a2a-errors';
import { acceptsOutput, messageFromV03, messageText } from './message-content';
import { A2aValidationPipe } from './dto/a2a-validation.pipe';
import { MessageSendParamsV03Dto } from './dto/send-message-v03.dto';

const v1 = (parts: unknown[]) => Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts });

describe('message content', () => {
  it('gives the agent text parts as they are and data parts as JSON, one per line', () => {
    expect(messageText(v1([{ text: 'weather in' }, { data: { city: 'Paris' } }]))).toBe('weather in\n{"city":"Paris"}');
  });

  it('gives a message of one part as that part (text as it is, data as JSON), and refuses one file part or none', () => {
    const text = 'weather in Paris';
    expect(messageText(v1([{ text }]))).toBe(text);
    expect(messageText(v1([{ data: { city: 'Paris' } }]))).toBe('{"city":"Paris"}');
    expect(messageText(v1([{ data: ['a', 1] }]))).toBe('["a",1]');
    expect(() => messageText(v1([{ url: 'https://x/y.pdf', mediaType: 'application/pdf' }]))).toThrow('message.parts[0] is a file part (application/pdf)');
    expect(() => messageText(v1([]))).toThrow(JsonRpcRequestError);
    expect(messageText(v1([{ text: ' a ' }, { text: '' }, { text: 'b' }]))).toBe(' a \n\nb');
  });

  it('refuses file parts with -32005 and empty messages with -32602', () => {
    expect(() => messageText(v1([{ text: 'see' }, { url: 'https://x/y.pdf', mediaType: 'application/pdf' }]))).toThrow(ContentTypeNotSupportedError);
    expect(() => messageText(v1([{ text: 'see' }, { url: 'https://x/y.pdf' }]))).toThrow('message.parts[1] is a file part');
    expect(() => messageText(v1([{ text: '  ' }]))).toThrow(JsonRpcRequestError);
  });

  it('translates a 0.3 message into the 1.0 shape with the SDK', () => {
    const message = messageFromV03({
      kind: 'message',
      messageId: 'm',
      role: 'user',
      contextId: 'c',
      parts: [{ kind: 'text', text: 'hi' }, { kind: 'data', data: { a: 1 } }],
    });
    expect(message).toMatchObject({ messageId: 'm', role: Role.ROLE_USER, contextId: 'c' });
    expect(messageText(message)).toBe('hi\n{"a":1}');
  });

  it('translates a validated 0.3 DTO, whose unset fields are own properties, by what is set (a file by uri stays a url part)', async () => {
    const dto = await new A2aValidationPipe().transform(
      { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'file', file: { uri: 'https://x/y.pdf' } }] } },
      { type: 'body', metatype: MessageSendParamsV03Dto },
    ) as MessageSendParamsV03Dto;
    expect(Object.keys(dto.message.parts[0].file!)).toContain('bytes');
    const message = messageFromV03(dto.message);
    expect(message.parts[0].content).toEqual({ $case: 'url', value: 'https://x/y.pdf' });
    expect(() => messageText(message)).toThrow('message.parts[0] is a file part');
  });

  it('matches accepted output modes with wildcards', () => {
    expect(acceptsOutput([], ['text/plain'])).toBe(true);
    expect(acceptsOutput(['text/*'], ['text/plain'])).toBe(true);
    expect(acceptsOutput(['*/*'], ['text/plain'])).toBe(true);
    expect(acceptsOutput(['application/json'], ['text/plain', 'application/json'])).toBe(true);
    expect(acceptsOutput(['image/png'], ['text/plain', 'application/json'])).toBe(false);
  });
});

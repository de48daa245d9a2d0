import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { Message, Role } from '@a2a-js/sdk';
import { JsonRpcRequestError } from './a2a-errors';
import { acceptsOutput, messageFromV03, messageText } from './message-content';

const v1 = (parts: unknown[]) => Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts });

describe('message content', () => {
  it('gives the agent text parts as they are and data parts as JSON, one per line', () => {
    expect(messageText(v1([{ text: 'weather in' }, { data: { city: 'Paris' } }]))).toBe('weather in\n{"city":"Paris"}');
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

  it('matches accepted output modes with wildcards', () => {
    expect(acceptsOutput([], ['text/plain'])).toBe(true);
    expect(acceptsOutput(['text/*'], ['text/plain'])).toBe(true);
    expect(acceptsOutput(['*/*'], ['text/plain'])).toBe(true);
    expect(acceptsOutput(['application/json'], ['text/plain', 'application/json'])).toBe(true);
    expect(acceptsOutput(['image/png'], ['text/plain', 'application/json'])).toBe(false);
  });
});

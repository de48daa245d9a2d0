import type { Message } from '@a2a-js/sdk';
import { legacyPushNotificationToV1StreamResponse } from '@a2a-js/sdk/compat/v0_3';
import { contentTypeNotSupported, echo, invalidParams } from './a2a-errors';
import type { MessageV03Dto } from './dto/send-message-v03.dto';

/**
 * The text the agent reads: text parts as they are, data parts as JSON, one per line. The agent
 * takes no files, so a file part is -32005.
 */
export function messageText(message: Message): string {
  const parts = message.parts;
  // A message of one part (the usual one) is its text: no list of lines to grow and join.
  const text = parts.length === 1 ? partText(parts[0], 0) : parts.map(partText).join('\n');
  if (text.trim() === '') throw invalidParams([{ field: 'message.parts', description: 'carry no text for the agent to read' }]);
  return text;
}

/** One part's line of the text the agent reads (see messageText). */
function partText(part: Message['parts'][number], index: number): string {
  switch (part.content?.$case) {
    case 'text':
      return part.content.value;
    case 'data':
      return JSON.stringify(part.content.value);
    default:
      throw contentTypeNotSupported(
        `message.parts[${index}] is a file part${part.mediaType ? ` (${echo(part.mediaType)})` : ''}; this agent reads text and data parts only`,
      );
  }
}

/**
 * An A2A 0.3 message in the SDK's 1.0 shape, through the SDK's own 0.3 translator (exposed for
 * push-notification bodies, whose `kind: "message"` case is exactly a 0.3 message). The
 * validated DTO goes in as plain JSON: its class instances hold every declared field, `undefined`
 * ones too, and the translator tests fields with `in` (a file with a `uri` would read as `bytes`).
 */
export function messageFromV03(message: MessageV03Dto): Message {
  const plain = JSON.parse(JSON.stringify(message)) as Record<string, unknown>;
  const converted = legacyPushNotificationToV1StreamResponse({ ...plain, kind: 'message' });
  if (converted.payload?.$case !== 'message') throw new Error('the 0.3 translator did not return a message');
  return converted.payload.value;
}

/**
 * Whether a client that accepts `accepted` output modes can read an agent that produces
 * `produced` (no list means anything; `*` wildcards allowed on either side).
 */
export function acceptsOutput(accepted: readonly string[], produced: readonly string[]): boolean {
  if (accepted.length === 0) return true;
  const matches = (a: string, b: string): boolean => {
    const [aType, aSub] = a.toLowerCase().split('/');
    const [bType, bSub] = b.toLowerCase().split('/');
    return (aType === '*' || bType === '*' || aType === bType) && (aSub === '*' || bSub === '*' || aSub === bSub);
  };
  return accepted.some((a) => produced.some((p) => matches(a.trim(), p.trim())));
}

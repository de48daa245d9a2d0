import type { SendMessageRequestDto } from './send-message.dto';

type Fields = Record<string, unknown>;

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

/** Absent, or present with a value the DTO's rule accepts (null is left to the full pass). */
const optional = (value: unknown, ok: (value: unknown) => boolean): boolean => value === undefined || ok(value);
const isString = (value: unknown): boolean => typeof value === 'string';

/** A text or data part with nothing else of the oneof; raw (base64) and url parts take the full pass. */
function isCommonPart(part: unknown): boolean {
  if (!isRecord(part)) return false;
  if (part.raw !== undefined || part.url !== undefined) return false;
  const content = part.text !== undefined ? typeof part.text === 'string' && part.data === undefined : part.data !== undefined && part.data !== null;
  return content && optional(part.metadata, isRecord) && optional(part.filename, isString) && optional(part.mediaType, isString);
}

/**
 * Whether a SendMessageRequest is one of the common well-formed shapes: a user message of text
 * and data parts, without configuration. Every request this accepts, the class-validator pass
 * (SendMessageRequestDto) accepts too, so that pass can be skipped for it (it costs more than
 * the rest of parsing a request); anything else, valid or not, still goes through it, and so
 * gets its exact field errors.
 */
export function isCommonSendMessageRequest(value: unknown): value is SendMessageRequestDto {
  if (!isRecord(value) || value.configuration !== undefined) return false;
  if (!optional(value.tenant, isString) || !optional(value.metadata, isRecord)) return false;
  const message = value.message;
  if (!isRecord(message)) return false;
  if (typeof message.messageId !== 'string' || message.messageId.length === 0 || message.role !== 'ROLE_USER') return false;
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) return false;
  for (const part of parts) if (!isCommonPart(part)) return false;
  return (
    optional(message.contextId, isString) &&
    optional(message.taskId, isString) &&
    optional(message.metadata, isRecord) &&
    optional(message.extensions, isStringArray) &&
    optional(message.referenceTaskIds, isStringArray)
  );
}

import { Inject, Injectable, type PipeTransform } from '@nestjs/common';
import { A2A_CONFIG } from '../a2a.constants';
import type { A2aConfig } from '../a2a.module-definition';
import { invalidParams } from '../a2a-errors';

/**
 * The size limits of a send request's message, checked on the raw body before validation walks
 * it (a million tiny parts must not cost a million validations): `maxPartsPerMessage` here, and
 * `maxTextLength` once the text is read (see `checkTextLength`). Both bindings and versions share
 * the `message.parts` shape.
 */
@Injectable()
export class MessageLimitsPipe implements PipeTransform<unknown, unknown> {
  constructor(@Inject(A2A_CONFIG) private readonly config: A2aConfig) {}

  transform(value: unknown): unknown {
    const message = typeof value === 'object' && value !== null ? (value as { message?: unknown }).message : undefined;
    const parts = typeof message === 'object' && message !== null ? (message as { parts?: unknown }).parts : undefined;
    const max = this.config.maxPartsPerMessage;
    if (Array.isArray(parts) && parts.length > max) {
      throw invalidParams([{ field: 'message.parts', description: `has ${parts.length} parts; the limit is ${max} (maxPartsPerMessage)` }]);
    }
    return value;
  }
}

/** The message's text as the agent reads it, within `maxTextLength` characters. */
export function checkTextLength(text: string, max: number): void {
  if (text.length > max) {
    throw invalidParams([{ field: 'message.parts', description: `carry ${text.length} characters of text; the limit is ${max} (maxTextLength)` }]);
  }
}

import { Injectable, ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { invalidParams, type FieldViolation } from '../a2a-errors';
import { SendMessageRequestDto } from './send-message.dto';
import { isCommonSendMessageRequest } from './send-message.shape';

/** Enough violations to fix a request, not so many that a hostile one makes a huge answer. */
const MAX_VIOLATIONS = 20;

/** One violation per field, named by its path (`message.parts[0].text`), from class-validator's nested errors. */
export function fieldViolations(errors: readonly ValidationError[], prefix = ''): FieldViolation[] {
  return errors.flatMap((error) => {
    const property = String(error.property);
    const field = /^\d+$/.test(property) ? `${prefix}[${property}]` : prefix ? `${prefix}.${property}` : property;
    const constraints = Object.values(error.constraints ?? {});
    const own = constraints.length > 0 ? [{ field, description: constraints.join(', ') }] : [];
    return [...own, ...fieldViolations(error.children ?? [], field)];
  });
}

/**
 * class-validator through Nest's ValidationPipe, failing with A2A's invalid-params error (-32602
 * / HTTP 400) whose message and `google.rpc.BadRequest` detail name each bad field. Used on the
 * HTTP+JSON handlers' parameters, and called directly by the JSON-RPC dispatcher for `params`.
 */
@Injectable()
export class A2aValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      // Also the task requests assembled from path and query by a custom parameter decorator.
      validateCustomDecorators: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => invalidParams(fieldViolations(errors).slice(0, MAX_VIOLATIONS)),
    });
  }

  /** A send whose shape a hand check already proved skips the class-validator pass (see isCommonSendMessageRequest). */
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.metatype === SendMessageRequestDto && isCommonSendMessageRequest(value)) return Promise.resolve(value);
    return super.transform(value, metadata) as Promise<unknown>;
  }
}

/**
 * `node -r ts-node/register/transpile-only bench/validation-cost.ts`
 *
 * In-process cost of checking one SendMessage request (the bench's own request body): Nest's
 * ValidationPipe with class-validator over SendMessageRequestDto, as every request paid it, and
 * A2aValidationPipe, whose hand check proves the common shapes and skips that pass.
 */
import { ValidationPipe } from '@nestjs/common';
import { A2aValidationPipe } from '../src/a2a/dto/a2a-validation.pipe';
import { SendMessageRequestDto } from '../src/a2a/dto/send-message.dto';

const body = (): object => ({ message: { messageId: 'bench-1', role: 'ROLE_USER', parts: [{ text: '{"toolCalls":0,"intervalMs":0,"idle":false}' }] } });

async function perRequestUs(check: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 5_000; i++) await check();
  const n = 20_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await check();
  return Number(process.hrtime.bigint() - start) / n / 1000;
}

async function main(): Promise<void> {
  const fullPass = new ValidationPipe({ transform: true, validateCustomDecorators: true, validationError: { target: false, value: false } });
  const ours = new A2aValidationPipe();
  const metadata = { type: 'body', metatype: SendMessageRequestDto } as const;
  for (let rep = 1; rep <= 3; rep++) {
    const full = await perRequestUs(() => fullPass.transform(body(), metadata));
    const hand = await perRequestUs(() => ours.transform(body(), metadata));
    console.log(`rep ${rep}: class-validator pass ${full.toFixed(1)} µs, hand check ${hand.toFixed(2)} µs per request`);
  }
}

void main();

import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { throwIfAborted } from '../../executor/abortable';
import { evaluateExpression, MAX_EXPRESSION_LENGTH } from './expression';

export const CALCULATOR_TOOL = 'calculator';

/** Arithmetic through a real parser; division by zero and syntax errors are real errors. */
export function createCalculatorTool() {
  return tool(
    ({ expression }, config) => {
      throwIfAborted(config?.signal);
      return { expression, value: evaluateExpression(expression) };
    },
    {
      name: CALCULATOR_TOOL,
      description:
        'Evaluates an arithmetic expression: + - * / % ^, parentheses, unary minus, pi, e, and sqrt, abs, round, floor, ceil, ln, log, exp, sin, cos, tan, min, max, pow.',
      schema: z.object({ expression: z.string().max(MAX_EXPRESSION_LENGTH).describe('e.g. "(12 + 3) * 7 / sqrt(9)"') }),
    },
  );
}

import { evaluateExpression, ExpressionError } from './expression';

describe('evaluateExpression', () => {
  it.each([
    ['12*7', 84],
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['2^3^2', 512],
    ['2**10', 1024],
    ['-2^2', -4],
    ['(-2)^2', 4],
    ['2^-1', 0.5],
    ['--3', 3],
    ['7 % 3', 1],
    ['10 / 4', 2.5],
    ['0.1 + 0.2', 0.3],
    ['1e3 + .5', 1000.5],
    ['sqrt(16) + abs(-2)', 6],
    ['max(1, 5, 3) - min(4, 2)', 3],
    ['pow(2, 8)', 256],
    ['round(pi * 100) / 100', 3.14],
    ['ln(e)', 1],
    ['log(1000)', 3],
    ['6 × 7 ÷ 2', 21],
    ['  3  ', 3],
  ])('%s = %d', (expression, value) => {
    expect(evaluateExpression(expression)).toBe(value);
  });

  it.each([
    ['1/0', 'division by zero'],
    ['5 % 0', 'modulo by zero'],
    ['2 +* 3', 'unexpected "*" at position 4'],
    ['(1 + 2', 'missing ")" at the end of the expression'],
    ['1 + 2)', 'unexpected ")" at position 6'],
    ['3 +', 'unexpected end of expression'],
    ['', 'empty expression'],
    ['2 $ 3', 'unexpected "$" at position 3'],
    ['foo(2)', 'unknown function "foo" at position 1'],
    ['x + 1', 'unknown name "x" at position 1'],
    ['sqrt(-4)', 'sqrt: square root of a negative number'],
    ['log(0)', 'log: logarithm of a non-positive number'],
    ['sqrt(1, 2)', 'sqrt expects 1 argument, got 2'],
    ['pow(2)', 'pow expects 2 arguments, got 1'],
    ['sqrt 4', 'sqrt needs parentheses'],
    ['10^400', 'the result is not a finite number'],
  ])('%s fails with "%s"', (expression, message) => {
    expect(() => evaluateExpression(expression)).toThrow(ExpressionError);
    expect(() => evaluateExpression(expression)).toThrow(message);
  });

  it('bounds nesting and length', () => {
    expect(() => evaluateExpression('('.repeat(300) + '1' + ')'.repeat(300))).toThrow('expression is nested too deeply');
    expect(() => evaluateExpression('-'.repeat(300) + '1')).toThrow('expression is nested too deeply');
    expect(() => evaluateExpression('1+'.repeat(600) + '1')).toThrow('expression is too long (1201 characters, at most 1000)');
  });
});

/**
 * A real arithmetic expression evaluator for the calculator tool: a tokenizer and a
 * recursive-descent parser (no `eval`, no `Function`). Supports + - * / % ^ (right
 * associative, `**` too), parentheses, unary minus, the constants pi, e and tau, and the
 * functions listed in FUNCTIONS. Every error is an ExpressionError with a precise message.
 */

export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
}

export const MAX_EXPRESSION_LENGTH = 1000;
const MAX_NESTING = 100;

type Token =
  | { kind: 'number'; value: number; pos: number }
  | { kind: 'name'; value: string; pos: number }
  | { kind: 'op'; value: string; pos: number }
  | { kind: 'end'; pos: number };

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

function unary(name: string, fn: (x: number) => number, check?: (x: number) => string | undefined) {
  return {
    arity: [1, 1] as const,
    apply: ([x]: number[]): number => {
      const problem = check?.(x);
      if (problem) throw new ExpressionError(`${name}: ${problem}`);
      return fn(x);
    },
  };
}

const positive = (x: number): string | undefined => (x <= 0 ? 'logarithm of a non-positive number' : undefined);

const FUNCTIONS: Record<string, { arity: readonly [number, number]; apply: (args: number[]) => number }> = {
  sqrt: unary('sqrt', Math.sqrt, (x) => (x < 0 ? 'square root of a negative number' : undefined)),
  cbrt: unary('cbrt', Math.cbrt),
  abs: unary('abs', Math.abs),
  round: unary('round', Math.round),
  floor: unary('floor', Math.floor),
  ceil: unary('ceil', Math.ceil),
  sin: unary('sin', Math.sin),
  cos: unary('cos', Math.cos),
  tan: unary('tan', Math.tan),
  asin: unary('asin', Math.asin, (x) => (Math.abs(x) > 1 ? 'argument outside [-1, 1]' : undefined)),
  acos: unary('acos', Math.acos, (x) => (Math.abs(x) > 1 ? 'argument outside [-1, 1]' : undefined)),
  atan: unary('atan', Math.atan),
  ln: unary('ln', Math.log, positive),
  log: unary('log', Math.log10, positive),
  log2: unary('log2', Math.log2, positive),
  exp: unary('exp', Math.exp),
  min: { arity: [1, Infinity], apply: (args) => Math.min(...args) },
  max: { arity: [1, Infinity], apply: (args) => Math.max(...args) },
  pow: { arity: [2, 2], apply: ([a, b]) => a ** b },
  hypot: { arity: [1, Infinity], apply: (args) => Math.hypot(...args) },
};

/** Every name an expression may use: the functions and the constants. */
export const EXPRESSION_NAMES: ReadonlySet<string> = new Set([...Object.keys(FUNCTIONS), ...Object.keys(CONSTANTS)]);

const OPERATORS = ['**', '+', '-', '*', '/', '%', '^', '(', ')', ',', '×', '÷'];

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const number = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i));
    if (number) {
      tokens.push({ kind: 'number', value: Number(number[0]), pos: i });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z_0-9]*/.exec(source.slice(i));
    if (name) {
      tokens.push({ kind: 'name', value: name[0].toLowerCase(), pos: i });
      i += name[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => source.startsWith(o, i));
    if (!op) throw new ExpressionError(`unexpected "${ch}" at position ${i + 1}`);
    const canonical = op === '**' ? '^' : op === '×' ? '*' : op === '÷' ? '/' : op;
    tokens.push({ kind: 'op', value: canonical, pos: i });
    i += op.length;
  }
  tokens.push({ kind: 'end', pos: source.length });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.expression();
    const next = this.peek();
    if (next.kind !== 'end') throw this.unexpected(next);
    return value;
  }

  // expression := term (("+" | "-") term)*
  private expression(): number {
    let value = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.takeOp();
      const right = this.term();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  // term := unary (("*" | "/" | "%") unary)*
  private term(): number {
    let value = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = this.takeOp();
      const right = this.unary();
      if ((op === '/' || op === '%') && right === 0) {
        throw new ExpressionError(op === '/' ? 'division by zero' : 'modulo by zero');
      }
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  }

  // unary := ("+" | "-") unary | power     (so -2^2 = -(2^2), as in mathematics)
  private unary(): number {
    if (this.isOp('-') || this.isOp('+')) {
      const op = this.takeOp();
      const value = this.nested(() => this.unary());
      return op === '-' ? -value : value;
    }
    return this.power();
  }

  // power := primary ("^" unary)?          (right associative: 2^3^2 = 2^9)
  private power(): number {
    const base = this.primary();
    if (!this.isOp('^')) return base;
    this.take();
    return base ** this.nested(() => this.unary());
  }

  // primary := number | constant | name "(" arguments ")" | "(" expression ")"
  private primary(): number {
    const token = this.take();
    if (token.kind === 'number') return token.value;
    if (token.kind === 'op' && token.value === '(') {
      const value = this.nested(() => this.expression());
      this.expect(')');
      return value;
    }
    if (token.kind === 'name') {
      if (this.isOp('(')) return this.call(token.value, token.pos);
      if (token.value in CONSTANTS) return CONSTANTS[token.value];
      if (token.value in FUNCTIONS) throw new ExpressionError(`${token.value} needs parentheses, as in ${token.value}(…)`);
      throw new ExpressionError(`unknown name "${token.value}" at position ${token.pos + 1}`);
    }
    throw this.unexpected(token);
  }

  private call(name: string, pos: number): number {
    const fn = FUNCTIONS[name];
    if (!fn) throw new ExpressionError(`unknown function "${name}" at position ${pos + 1}`);
    this.expect('(');
    const args: number[] = [];
    if (!this.isOp(')')) {
      do {
        args.push(this.nested(() => this.expression()));
      } while (this.isOp(',') && this.take());
    }
    this.expect(')');
    const [min, max] = fn.arity;
    if (args.length < min || args.length > max) {
      const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
      throw new ExpressionError(`${name} expects ${wanted} argument${wanted === '1' ? '' : 's'}, got ${args.length}`);
    }
    return fn.apply(args);
  }

  private nested(parse: () => number): number {
    if (++this.depth > MAX_NESTING) throw new ExpressionError('expression is nested too deeply');
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private peek(): Token {
    return this.tokens[this.index];
  }

  private take(): Token {
    const token = this.tokens[this.index];
    if (token.kind !== 'end') this.index++;
    return token;
  }

  /** Takes the operator the caller has just checked with isOp. */
  private takeOp(): string {
    const token = this.take();
    return token.kind === 'op' ? token.value : '';
  }

  private isOp(value: string): boolean {
    const token = this.peek();
    return token.kind === 'op' && token.value === value;
  }

  private expect(value: string): void {
    const token = this.take();
    if (token.kind !== 'op' || token.value !== value) {
      if (token.kind === 'end') throw new ExpressionError(`missing "${value}" at the end of the expression`);
      throw this.unexpected(token);
    }
  }

  private unexpected(token: Token): ExpressionError {
    if (token.kind === 'end') return new ExpressionError('unexpected end of expression');
    return new ExpressionError(`unexpected "${token.value}" at position ${token.pos + 1}`);
  }
}

/** Evaluates an arithmetic expression; throws an ExpressionError saying exactly what is wrong. */
export function evaluateExpression(source: string): number {
  if (source.trim() === '') throw new ExpressionError('empty expression');
  if (source.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(`expression is too long (${source.length} characters, at most ${MAX_EXPRESSION_LENGTH})`);
  }
  const value = new Parser(tokenize(source)).parse();
  if (!Number.isFinite(value)) throw new ExpressionError('the result is not a finite number');
  // 12 significant digits hide binary rounding noise (0.1 + 0.2 gives 0.3).
  return Number(value.toPrecision(12));
}

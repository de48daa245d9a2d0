import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { SecurityRequirement, SecurityScheme } from '@a2a-js/sdk';
import { A2A_CONFIG } from '../a2a.constants';
import type { A2aAuthOptions, A2aConfig } from '../a2a.module-definition';
import { authenticationRequired } from '../a2a-errors';
import type { CallerId } from '../task-record';

export const API_KEY_HEADER = 'X-API-Key';
/** Names of the schemes in the agent card's `securitySchemes`. */
export const API_KEY_SCHEME = 'apiKey';
export const BEARER_SCHEME = 'bearer';
const REALM = 'a2a';

interface Credential {
  digest: Buffer;
  caller: string;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** A caller id from a secret, without the secret: the same key is the same caller across restarts. */
function credential(kind: string, secret: string): Credential {
  const digest = sha256(secret);
  return { digest, caller: `${kind}:${digest.toString('hex').slice(0, 16)}` };
}

/**
 * The caller owning a presented secret, compared in constant time: digests of equal length,
 * and every configured secret is compared (no early exit), so timing tells nothing about which
 * secret, or how much of one, matched.
 */
function match(credentials: readonly Credential[], presented: string): string | undefined {
  const digest = sha256(presented);
  let caller: string | undefined;
  for (const candidate of credentials) {
    if (timingSafeEqual(candidate.digest, digest)) caller ??= candidate.caller;
  }
  return caller;
}

/**
 * Every value a request gives a header, repeated ones included: Node keeps only the first
 * `Authorization` in `headers` (and joins repeated `X-API-Key`s), so the raw list is read when there.
 */
function headerValues(name: string, headers: IncomingHttpHeaders, rawHeaders?: readonly string[]): string[] {
  if (rawHeaders) {
    const values: string[] = [];
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) values.push(rawHeaders[i + 1].trim());
    return values;
  }
  const value = headers[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((v) => v.trim());
}

function bearerToken(authorization: string): string | undefined {
  const found = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return found ? found[1] : undefined;
}

/**
 * API-key and bearer-token authentication of the A2A routes (A2aAuthGuard), and its declaration
 * on the agent card. Off when no credential is configured: every caller is then anonymous.
 */
@Injectable()
export class A2aAuthService {
  private readonly apiKeys: Credential[];
  private readonly bearerTokens: Credential[];

  constructor(@Inject(A2A_CONFIG) config: A2aConfig) {
    this.apiKeys = config.auth.apiKeys.map((key) => credential('api-key', key));
    this.bearerTokens = config.auth.bearerTokens.map((token) => credential('bearer', token));
  }

  get enabled(): boolean {
    return this.apiKeys.length > 0 || this.bearerTokens.length > 0;
  }

  /**
   * The caller the request's credentials name. Every credential presented in a header this
   * server reads (`X-API-Key` when it takes keys, `Authorization` when it takes bearer tokens)
   * must be valid, and all must name the same caller: one wrong or foreign credential beside a
   * valid one is 401, never a pass. None presented is 401 too.
   */
  authenticate(headers: IncomingHttpHeaders, rawHeaders?: readonly string[]): CallerId {
    if (!this.enabled) return undefined;
    const apiKeys = this.apiKeys.length > 0 ? headerValues(API_KEY_HEADER.toLowerCase(), headers, rawHeaders) : [];
    const authorizations = this.bearerTokens.length > 0 ? headerValues('authorization', headers, rawHeaders) : [];
    const callers = new Set<string | undefined>([
      ...apiKeys.map((key) => match(this.apiKeys, key)),
      ...authorizations.map((value) => {
        const token = bearerToken(value);
        return token === undefined ? undefined : match(this.bearerTokens, token);
      }),
    ]);
    const [caller] = callers;
    if (callers.size === 1 && caller !== undefined) return caller;
    const presented = callers.size > 0;
    const badToken = authorizations.some((value) => bearerToken(value) !== undefined);
    // Never echo what was presented: a near miss of a real secret is a secret too.
    throw authenticationRequired(
      `${!presented ? 'Authentication required' : callers.has(undefined) ? 'Invalid credentials' : 'Credentials of more than one caller'}: send ${this.accepted().join(' or ')}`,
      this.challenges(badToken && callers.has(undefined)),
    );
  }

  private accepted(): string[] {
    return [
      ...(this.apiKeys.length > 0 ? [`the header ${API_KEY_HEADER}: <key>`] : []),
      ...(this.bearerTokens.length > 0 ? ['Authorization: Bearer <token>'] : []),
    ];
  }

  /** WWW-Authenticate challenges (RFC 7235; RFC 6750's invalid_token when a bearer token was wrong). */
  private challenges(badToken: boolean): string[] {
    return [
      ...(this.bearerTokens.length > 0 ? [`Bearer realm="${REALM}"${badToken ? ', error="invalid_token"' : ''}`] : []),
      ...(this.apiKeys.length > 0 ? [`ApiKey realm="${REALM}", header="${API_KEY_HEADER}"`] : []),
    ];
  }
}

/** The card's `securitySchemes` and `securityRequirements` (either scheme suffices) for these credentials. */
export function securityDeclaration(auth: Required<A2aAuthOptions>): {
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
} {
  const securitySchemes: Record<string, SecurityScheme> = {};
  if (auth.apiKeys.length > 0) {
    securitySchemes[API_KEY_SCHEME] = {
      scheme: { $case: 'apiKeySecurityScheme', value: { description: 'An API key issued by the operator', location: 'header', name: API_KEY_HEADER } },
    };
  }
  if (auth.bearerTokens.length > 0) {
    securitySchemes[BEARER_SCHEME] = {
      scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'A bearer token issued by the operator', scheme: 'Bearer', bearerFormat: '' } },
    };
  }
  return {
    securitySchemes,
    securityRequirements: Object.keys(securitySchemes).map((name) => ({ schemes: { [name]: { list: [] } } })),
  };
}

/** The same schemes in A2A 0.3's card shape (OpenAPI style: `type`, `in`, `scheme`), and 0.3's `security`. */
export function legacySecurityDeclaration(auth: Required<A2aAuthOptions>): {
  securitySchemes: Record<string, Record<string, string>>;
  security: Record<string, string[]>[];
} {
  const securitySchemes: Record<string, Record<string, string>> = {};
  if (auth.apiKeys.length > 0) securitySchemes[API_KEY_SCHEME] = { type: 'apiKey', in: 'header', name: API_KEY_HEADER };
  if (auth.bearerTokens.length > 0) securitySchemes[BEARER_SCHEME] = { type: 'http', scheme: 'bearer' };
  return { securitySchemes, security: Object.keys(securitySchemes).map((name) => ({ [name]: [] })) };
}

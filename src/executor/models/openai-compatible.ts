/**
 * The OpenAI-compatible model (OpenAI, vLLM, Ollama, LM Studio, llama.cpp server): ChatOpenAI
 * whose failures say which endpoint failed and why, in words a user can act on, instead of the
 * client's "Connection error." or "500 status code (no body)".
 */
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import { ChatOpenAI } from '@langchain/openai';
import { OfflineChatModel } from './offline-chat-model';

export const OPENAI_DEFAULT_ENDPOINT = 'https://api.openai.com/v1';

/** What a socket-level error code means, for a person. */
const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection reset',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
};

/** The error and its causes, outermost first (bounded: a cause chain may loop). */
function causes(err: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && out.length < 8 && !out.includes(current as Record<string, unknown>)) {
    out.push(current as Record<string, unknown>);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

/** The server's own words: the message without the client's status prefix and help links. */
function serverWords(message: string, status: number): string {
  return message
    .replace(/\s*Troubleshooting URL:.*$/s, '')
    .replace(new RegExp(`^${status}\\s+`), '')
    .replace(/^status code \(no body\)$/, 'no details given')
    .trim();
}

/** A model failure as a sentence naming the endpoint and the cause. */
export function describeModelError(err: unknown, endpoint: string, model: string): string {
  const chain = causes(err);
  const message = (chain[0]?.message as string | undefined) ?? String(err);
  const status = chain.map((e) => e.status).find((s): s is number => typeof s === 'number');
  if (status !== undefined) {
    const words = serverWords(message, status) || 'no details given';
    if (status === 401 || status === 403) return `the model at ${endpoint} refused the credentials (${status}): ${words}`;
    if (status === 404) return `the model at ${endpoint} answered 404 (is the model "${model}" served there, and is the path right?): ${words}`;
    if (status === 429) return `the model at ${endpoint} is rate-limiting requests (429): ${words}`;
    if (status >= 500) return `the model at ${endpoint} failed (${status}): ${words}`;
    return `the model at ${endpoint} rejected the request (${status}): ${words}`;
  }
  const code = chain.map((e) => e.code).find((c): c is string => typeof c === 'string' && c in NETWORK_CAUSES);
  if (code) return `could not reach the model at ${endpoint}: ${NETWORK_CAUSES[code]}`;
  const names = chain.map((e) => e.name);
  if (names.includes('APIConnectionTimeoutError')) return `could not reach the model at ${endpoint}: no answer in time`;
  if (names.includes('APIConnectionError')) {
    const deepest = (chain[chain.length - 1]?.message as string | undefined) ?? message;
    return `could not reach the model at ${endpoint}: ${deepest}`;
  }
  return `the model at ${endpoint} failed: ${message}`;
}

export interface OpenAiCompatibleOptions {
  model: string;
  /** Unset: OpenAI itself. */
  baseURL?: string;
  apiKey: string;
  maxRetries?: number;
}

export class OpenAiCompatibleChatModel extends ChatOpenAI {
  readonly endpoint: string;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    super({
      model: options.model,
      apiKey: options.apiKey,
      configuration: options.baseURL ? { baseURL: options.baseURL } : undefined,
      maxRetries: options.maxRetries ?? 1,
    });
    this.endpoint = (options.baseURL ?? OPENAI_DEFAULT_ENDPOINT).replace(/\/+$/, '');
  }

  /** bindTools and withConfig copy the model; the copy must explain its failures too. */
  override withConfig(config: Partial<this['ParsedCallOptions']>): this {
    const copy = new OpenAiCompatibleChatModel(this.options);
    copy.defaultOptions = { ...this.defaultOptions, ...config };
    return copy as this;
  }

  override async _generate(messages: BaseMessage[], options: this['ParsedCallOptions'], runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    try {
      return await super._generate(messages, options, runManager);
    } catch (err) {
      throw this.explained(err, options.signal);
    }
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    try {
      yield* super._streamResponseChunks(messages, options, runManager);
    } catch (err) {
      throw this.explained(err, options.signal);
    }
  }

  /** A cancelled call keeps its own error; any other failure says what went wrong, and where. */
  private explained(err: unknown, signal?: AbortSignal): unknown {
    if (signal?.aborted) return err;
    return new Error(describeModelError(err, this.endpoint, this.model), { cause: err });
  }
}

/** What the boot log says about a model: its kind and, for a remote one, its name and endpoint (never its key). */
export function describeChatModel(model: BaseChatModel): string {
  if (model instanceof OpenAiCompatibleChatModel) return `OpenAI-compatible model "${model.model}" at ${model.endpoint}`;
  if (model instanceof ChatOpenAI) return `OpenAI-compatible model "${model.model}" at ${model.clientConfig.baseURL ?? OPENAI_DEFAULT_ENDPOINT}`;
  if (model instanceof OfflineChatModel) return `offline model ${model.getName()} (no network, no key)`;
  return `model ${model.getName()}`;
}

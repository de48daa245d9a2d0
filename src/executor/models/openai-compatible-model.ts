/**
 * The OpenAI-compatible model (OpenAI, vLLM, Ollama, LM Studio, llama.cpp server): ChatOpenAI
 * whose failures say which endpoint failed and why. Loaded only when such a model is made
 * (openai-compatible.ts): @langchain/openai and the openai client are ~230 modules.
 */
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import { ChatOpenAI } from '@langchain/openai';
import { describeModelError, OPENAI_DEFAULT_ENDPOINT } from './openai-model-errors';

/** For describeChatModel's instanceof, from the module that already loaded it. */
export { ChatOpenAI };

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

/**
 * The OpenAI-compatible model (OpenAI, vLLM, Ollama, LM Studio, llama.cpp server), made and
 * described without loading @langchain/openai until one is made: that package and the openai
 * client are ~230 modules and ~2.3 MB of heap that every other server would carry (and every
 * major GC would mark) for nothing.
 */
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { OpenAiCompatibleChatModel, OpenAiCompatibleOptions } from './openai-compatible-model';
import { OPENAI_DEFAULT_ENDPOINT } from './openai-model-errors';
import { OfflineChatModel } from './offline-chat-model';

export { describeModelError, OPENAI_DEFAULT_ENDPOINT } from './openai-model-errors';
export type { OpenAiCompatibleChatModel, OpenAiCompatibleOptions } from './openai-compatible-model';

type ModelModule = typeof import('./openai-compatible-model');

/** The model's module, loaded on first use (synchronously: a model is made at boot, by a sync factory). */
function modelModule(): ModelModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./openai-compatible-model') as ModelModule;
}

export function createOpenAiCompatibleModel(options: OpenAiCompatibleOptions): OpenAiCompatibleChatModel {
  return new (modelModule().OpenAiCompatibleChatModel)(options);
}

/** What the boot log says about a model: its kind and, for a remote one, its name and endpoint (never its key). */
export function describeChatModel(model: BaseChatModel): string {
  if (model instanceof OfflineChatModel) return `offline model ${model.getName()} (no network, no key)`;
  // Every ChatOpenAI (Azure's too) says "openai" here; only such a model needs the package, which
  // it has already loaded.
  if (/openai/.test(model._llmType())) {
    const { OpenAiCompatibleChatModel, ChatOpenAI } = modelModule();
    if (model instanceof OpenAiCompatibleChatModel) return `OpenAI-compatible model "${model.model}" at ${model.endpoint}`;
    if (model instanceof ChatOpenAI) return `OpenAI-compatible model "${model.model}" at ${model.clientConfig.baseURL ?? OPENAI_DEFAULT_ENDPOINT}`;
  }
  return `model ${model.getName()}`;
}

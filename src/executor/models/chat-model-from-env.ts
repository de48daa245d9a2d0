import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatOpenAI } from '@langchain/openai';
import { OfflineToolModel } from './offline-tool-model';

export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/**
 * The model the environment asks for: any OpenAI-compatible endpoint when `OPENAI_API_KEY`
 * or `OPENAI_BASE_URL` is set (model from `MODEL`), else `offline()` (by default the
 * OfflineToolModel, which calls tools by name).
 */
export function chatModelFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  offline: () => BaseChatModel = () => new OfflineToolModel(),
): BaseChatModel {
  const apiKey = env.OPENAI_API_KEY?.trim();
  const baseURL = env.OPENAI_BASE_URL?.trim();
  if (!apiKey && !baseURL) return offline();
  return new ChatOpenAI({
    model: env.MODEL?.trim() || DEFAULT_OPENAI_MODEL,
    // Local OpenAI-compatible servers often need no key, but the client insists on one.
    apiKey: apiKey || 'not-needed',
    configuration: baseURL ? { baseURL } : undefined,
    maxRetries: 1,
  });
}

import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { OfflineToolModel } from './offline-tool-model';
import { createOpenAiCompatibleModel } from './openai-compatible';

export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';

/**
 * The model the environment asks for: any OpenAI-compatible endpoint when `OPENAI_API_KEY`
 * or `OPENAI_BASE_URL` is set (model from `MODEL`), else `offline()` (by default the
 * OfflineToolModel, which calls tools by name). A malformed `OPENAI_BASE_URL` throws.
 */
export function chatModelFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  offline: () => BaseChatModel = () => new OfflineToolModel(),
): BaseChatModel {
  const apiKey = env.OPENAI_API_KEY?.trim();
  const baseURL = env.OPENAI_BASE_URL?.trim();
  if (!apiKey && !baseURL) return offline();
  if (baseURL) checkBaseUrl(baseURL);
  return createOpenAiCompatibleModel({
    model: env.MODEL?.trim() || DEFAULT_OPENAI_MODEL,
    // Local OpenAI-compatible servers often need no key, but the client insists on one.
    apiKey: apiKey || 'not-needed',
    baseURL: baseURL || undefined,
    maxRetries: 1,
  });
}

/** A base URL every request would fail on stops the app at boot, naming the variable. */
function checkBaseUrl(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new Error(`OPENAI_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1, got ${JSON.stringify(value)}`);
  }
}

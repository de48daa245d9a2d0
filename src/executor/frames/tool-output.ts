/**
 * What a tool produced, as a frame wants it: its content (not LangChain's message object) and,
 * for a failure, the tool's own message (not the hint LangGraph appends for the model).
 */
import { BaseMessage } from '@langchain/core/messages';

/** ToolNode turns a thrown error into `Error: <message>\n Please fix your mistakes.` for the model. */
const TOOL_NODE_ERROR = /^Error: ([\s\S]*)\n Please fix your mistakes\.$/;

/** The text of message content: a string, or the text blocks of a content array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block: unknown) =>
        typeof block === 'string'
          ? block
          : typeof block === 'object' && block !== null && typeof (block as { text?: unknown }).text === 'string'
            ? (block as { text: string }).text
            : '',
      )
      .join('');
  }
  return '';
}

/** A thrown value's message; anything that is not an Error is described, never lost. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** The tool's own error message out of a ToolNode error ToolMessage's content. */
export function toolErrorText(content: unknown): string {
  const text = contentText(content);
  return TOOL_NODE_ERROR.exec(text)?.[1] ?? text;
}

/**
 * A tool's result for a `completed` frame. A ToolMessage stands for its content, and JSON
 * text of an object or array (how LangChain stores a tool's structured return value) is
 * read back into that structure. Any other value is returned as is (sanitised later).
 */
export function toolResultValue(output: unknown): unknown {
  if (!BaseMessage.isInstance(output)) return output;
  const content: unknown = output.content;
  return typeof content === 'string' ? textResultValue(content) : content;
}

/**
 * A tool's result out of its message's text content: JSON text of an object or array read back
 * into that structure (a new one, which nothing else holds), any other text as it is.
 */
function textResultValue(content: string): unknown {
  const first = content.trimStart()[0];
  if (first !== '{' && first !== '[') return content;
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return content;
  }
}

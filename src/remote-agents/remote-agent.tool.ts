/**
 * A remote A2A agent as a LangChain tool. The tool sends its question to the agent with the
 * official SDK client (tool-call-v1 activated) and, while the agent works, forwards each of
 * its frames and narration lines live into the run that called it (see forwardingChannel), so
 * the caller's clients see the delegated agent's tool timeline nested under this call.
 */
import { randomUUID } from 'node:crypto';
import { Role, type AgentCard, type Message, type StreamResponse } from '@a2a-js/sdk';
import { withA2AExtensions, type Client } from '@a2a-js/sdk/client';
import type { RunnableConfig } from '@langchain/core/runnables';
import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import { z } from 'zod';
import { forwardingChannel } from '../executor';
import { TOOL_CALL_V1_EXTENSION_URI } from '../extensions';
import { checkMaxDepth, DEFAULT_MAX_DELEGATION_DEPTH, delegationOf, nextHopMetadata } from './delegation';
import { connectRemoteAgent, fetchWithHeaders, type RemoteAgentConnection } from './remote-agent-client';
import { RemoteTaskReader, type RemoteOutcome } from './remote-task-reader';

export interface RemoteAgentToolOptions {
  /** The tool's name, as the model calls it: letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** The agent's base URL (its card at `/.well-known/agent-card.json`) or its card's URL. */
  url: string;
  /** What the model reads about the tool. Default: a line naming the agent. */
  description?: string;
  /** Sent with every request to the agent (its card too). Never logged nor put in a message. */
  headers?: Record<string, string>;
  /** Sent as `X-API-Key`. */
  apiKey?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  bearerToken?: string;
  /** How long the agent may take to answer; past it its task is cancelled and the call fails. Default 120000. */
  timeoutMs?: number;
  /** How many agents deep a chain of delegations may go (loops stop there). Default 4. */
  maxDepth?: number;
  /** How long a CancelTask sent to the agent may take. Default 5000. */
  cancelTimeoutMs?: number;
  /** The fetch used for every request (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_REMOTE_TIMEOUT_MS = 120_000;
const DEFAULT_CANCEL_TIMEOUT_MS = 5_000;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A URL fit for messages: no user info, no query (either may hold a secret). */
export function displayUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

function checkOptions(options: RemoteAgentToolOptions): void {
  const label = `remoteAgentTool(${JSON.stringify(String(options.name).slice(0, 64))})`;
  if (typeof options.name !== 'string' || !TOOL_NAME.test(options.name)) {
    throw new Error(`${label}: name must be 1 to 64 letters, digits, "_" or "-"`);
  }
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new Error(`${label}: url is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${label}: url must be http or https, got ${url.protocol}`);
  for (const key of ['timeoutMs', 'cancelTimeoutMs'] as const) {
    const v = options[key];
    if (v !== undefined && (!Number.isInteger(v) || v <= 0 || v > 2 ** 31 - 1)) throw new Error(`${label}: ${key} must be a positive whole number of milliseconds`);
  }
  if (options.maxDepth !== undefined) checkMaxDepth(options.maxDepth, `${label}: maxDepth`);
  for (const key of ['apiKey', 'bearerToken'] as const) {
    const v = options[key];
    // The value itself is never shown: it is a secret.
    if (v !== undefined && (typeof v !== 'string' || v.trim() === '' || /[\r\n]/.test(v))) throw new Error(`${label}: ${key} must be a non-empty single-line string`);
  }
}

function credentialHeaders(options: RemoteAgentToolOptions): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers['X-API-Key'] = options.apiKey;
  if (options.bearerToken !== undefined) headers.Authorization = `Bearer ${options.bearerToken}`;
  return headers;
}

/** An error's message, read by shape: errors from fetch come from Node's own realm. */
function messageOf(err: unknown): string | undefined {
  const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : undefined;
}

/** Why a request failed, in words: the network's cause rather than "fetch failed". */
export function causeOf(err: unknown): string {
  if (typeof err === 'string') return err;
  const message = messageOf(err) ?? 'unknown error';
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  const causeMessage = messageOf(cause);
  if (message === 'fetch failed' && causeMessage) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && !causeMessage.includes(code) ? `${code}: ${causeMessage}` : causeMessage;
  }
  return message;
}

/** fetch's own failures: no connection, or a connection that broke. */
const isNetworkError = (err: unknown): boolean => {
  const message = messageOf(err);
  return (err as { name?: unknown } | undefined)?.name === 'TypeError' && (message === 'fetch failed' || message === 'terminated');
};

/** Why an agent's card could not be had: the agent is not there, or its card is not usable. */
function discoveryFailure(name: string, shownUrl: string, err: unknown): Error {
  return new Error(
    isNetworkError(err) ? `${name} (${shownUrl}) is unreachable: ${causeOf(err)}` : `${name} (${shownUrl}): its agent card could not be read: ${causeOf(err)}`,
  );
}

/**
 * The message that delegates: the question as text, and the hop count in its metadata.
 */
function delegationMessage(question: string, metadata: Record<string, unknown>): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: question }, metadata: undefined, filename: '', mediaType: '' }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

class RemoteAgent {
  private readonly fetchImpl: typeof fetch;
  private connection: Promise<RemoteAgentConnection> | undefined;
  readonly shownUrl: string;
  private readonly timeoutMs: number;
  private readonly cancelTimeoutMs: number;
  readonly maxDepth: number;

  constructor(private readonly options: RemoteAgentToolOptions) {
    this.fetchImpl = fetchWithHeaders(credentialHeaders(options), options.fetch ?? fetch);
    this.shownUrl = displayUrl(options.url);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REMOTE_TIMEOUT_MS;
    this.cancelTimeoutMs = options.cancelTimeoutMs ?? DEFAULT_CANCEL_TIMEOUT_MS;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DELEGATION_DEPTH;
  }

  get name(): string {
    return this.options.name;
  }

  /** The client, from the card read once; a failed read is tried again on the next call. */
  connect(): Promise<RemoteAgentConnection> {
    this.connection ??= connectRemoteAgent(this.options.url, this.fetchImpl).catch((err: unknown) => {
      this.connection = undefined;
      throw discoveryFailure(this.name, this.shownUrl, err);
    });
    return this.connection;
  }

  /** Asks the question; resolves with the answer, rejects with a message naming this agent. */
  async ask(question: string, config: RunnableConfig): Promise<string> {
    const delegation = delegationOf(config.configurable?.requestMetadata, this.maxDepth);
    if (delegation.depth >= delegation.maxDepth) {
      throw new Error(
        `${this.name} was not asked: the chain of agents is ${delegation.depth} deep, the limit is ${delegation.maxDepth} (agents may be asking each other in a loop)`,
      );
    }
    const signal = config.signal;
    signal?.throwIfAborted();
    const { client } = await this.connect();
    signal?.throwIfAborted();
    const channel = forwardingChannel(config);
    const reader = new RemoteTaskReader({
      frame: (frame) => channel?.frame(frame),
      narration: (text) => channel?.narration(`${this.name}: ${text}`),
    });
    const stop = new AbortController();
    const stream = client.sendMessageStream(
      { tenant: '', message: delegationMessage(question, nextHopMetadata(delegation)), configuration: undefined, metadata: undefined },
      { signal: stop.signal, serviceParameters: this.serviceParameters() },
    );
    const outcome = await this.follow(stream, reader, signal, stop, client);
    return this.answerOf(outcome, reader);
  }

  private serviceParameters(): Record<string, string> {
    const parameters: Record<string, string> = {};
    withA2AExtensions(TOOL_CALL_V1_EXTENSION_URI)(parameters);
    return parameters;
  }

  /**
   * Reads the stream to the task's end. The caller's abort (cancel, deadline) or this agent's
   * time budget end the call at once; the remote task is then cancelled in the background.
   */
  private follow(
    stream: AsyncGenerator<StreamResponse, void, undefined>,
    reader: RemoteTaskReader,
    signal: AbortSignal | undefined,
    stop: AbortController,
    client: Client,
  ): Promise<RemoteOutcome | undefined> {
    return new Promise((resolve, reject) => {
      let settled = false;
      // While the stream is read, the task's id may still come (cancelRemote waits for it); once it has ended or broken, it will not.
      let reading = true;
      const finish = (end: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        end();
      };
      const giveUp = (error: Error): void =>
        finish(() => {
          reject(error);
          void this.cancelRemote(client, reader, stream, stop, () => reading);
        });
      const onAbort = (): void => giveUp(signal?.reason instanceof Error ? signal.reason : new Error('cancelled'));
      const timer = setTimeout(() => giveUp(new Error(`${this.name} did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      void (async () => {
        try {
          for await (const event of stream) {
            reader.read(event);
            if (reader.result || settled) break;
          }
          reading = false;
          if (reader.result || settled) {
            finish(() => resolve(reader.result));
            return;
          }
          // The stream ended with the task unfinished: nobody follows it any more.
          giveUp(new Error(`${this.name}: the stream ended before its task finished`));
        } catch (err) {
          reading = false;
          if (settled) return;
          this.connection = isNetworkError(err) ? undefined : this.connection;
          giveUp(new Error(this.streamFailure(err, reader)));
        }
      })();
    });
  }

  private streamFailure(err: unknown, reader: RemoteTaskReader): string {
    if (reader.taskId === undefined) {
      return isNetworkError(err) ? `${this.name} (${this.shownUrl}) is unreachable: ${causeOf(err)}` : `${this.name} answered an error: ${causeOf(err)}`;
    }
    return `${this.name}: the stream broke before its task finished: ${causeOf(err)}`;
  }

  /**
   * CancelTask on the remote task (once its id is known, waiting a bounded time for it while the
   * stream may still bring it), then the stream is closed. Never throws: the call has already ended.
   */
  private async cancelRemote(
    client: Client,
    reader: RemoteTaskReader,
    stream: AsyncGenerator<StreamResponse, void, undefined>,
    stop: AbortController,
    idMayCome: () => boolean,
  ): Promise<void> {
    try {
      const deadline = Date.now() + this.cancelTimeoutMs;
      // The id comes with the stream's first event; until then there is nothing to name. A stream
      // that broke before it (refused credentials, a dropped connection) brings none: without this
      // check the call's end kept polling for cancelTimeoutMs, holding the process open meanwhile.
      while (reader.taskId === undefined && !reader.result && idMayCome() && Date.now() < deadline && !stop.signal.aborted) {
        await new Promise((r) => setTimeout(r, 10));
      }
      if (reader.taskId !== undefined && !reader.result) {
        await client.cancelTask({ tenant: '', id: reader.taskId, metadata: undefined }, { signal: AbortSignal.timeout(this.cancelTimeoutMs) });
      }
    } catch {
      // A task that already ended, or an agent gone: nothing more to stop.
    } finally {
      stop.abort();
      void stream.return(undefined).catch(() => undefined);
    }
  }

  private answerOf(outcome: RemoteOutcome | undefined, reader: RemoteTaskReader): string {
    if (outcome?.kind === 'answered') return outcome.text;
    const because = outcome?.text ? `: ${outcome.text}` : '';
    switch (outcome?.state) {
      case 'failed':
        throw new Error(`${this.name} failed${because}`);
      case 'canceled':
        throw new Error(`${this.name} cancelled its task${because}`);
      case 'rejected':
        throw new Error(`${this.name} rejected the task${because}`);
      case 'auth-required':
        throw new Error(`${this.name} asks for authentication${because}`);
      default:
        throw new Error(`${this.name}: the stream ended before its task ${reader.taskId ?? ''} finished`);
    }
  }
}

/**
 * A LangChain tool that asks a remote A2A agent (input `{ question }`, answer as text). In a
 * toolstream run, the agent's tool calls appear live nested under this call (`parentToolCallId`)
 * and its narration as this run's, prefixed with the tool's name. The call fails with a message
 * naming the agent when it is unreachable, answers an error, drops its stream, fails, takes
 * longer than `timeoutMs`, or when the chain of agents asking agents reaches `maxDepth`.
 */
export function remoteAgentTool(options: RemoteAgentToolOptions): StructuredToolInterface {
  checkOptions(options);
  const agent = new RemoteAgent(options);
  return tool((input: { question: string }, config: RunnableConfig) => agent.ask(input.question, config), {
    name: options.name,
    description:
      options.description ?? `Asks the remote agent "${options.name}" a question in plain language and returns its answer.`,
    schema: z.object({ question: z.string().min(1).describe(`The question for ${options.name}, in plain language`) }),
  });
}

/** A tool description from an agent card: its name, what it does, its skills. */
export function describeFromCard(name: string, card: AgentCard): string {
  const skills = card.skills.map((s) => s.name || s.id).filter(Boolean);
  const what = card.description.trim() || card.name.trim();
  return `Asks the remote agent "${name}" (${card.name.trim() || name}) a question in plain language and returns its answer. ${what}${
    skills.length > 0 ? ` Skills: ${skills.join(', ')}.` : ''
  }`.trim();
}

/**
 * Reads a remote agent's card with the same credentials the tool will use, within `timeoutMs`
 * (default 5000); rejects with a message naming the agent, never its credentials.
 */
export async function readRemoteAgentCard(options: RemoteAgentToolOptions, timeoutMs = 5_000): Promise<AgentCard> {
  checkOptions(options);
  const base = fetchWithHeaders(credentialHeaders(options), options.fetch ?? fetch);
  const bounded: typeof fetch = (input, init) => base(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  try {
    return (await connectRemoteAgent(options.url, bounded)).card;
  } catch (err) {
    throw discoveryFailure(options.name, displayUrl(options.url), err);
  }
}

/**
 * (c) The limit: a bare node:http server that JSON.stringifies the same frame objects into the
 * same A2A 1.0 JSON-RPC StreamResponse shape and writes them as SSE, with the scripted run's
 * narration (the WORKING status's message) and answer (an artifact) as toolstream writes them.
 * No framework, no store, no bus, and nothing a client was not sent (no history, no
 * timestamps): what any architecture on Node pays at the least for the run's events.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { TOOL_CALL_V1_ARTIFACT_NAME, TOOL_CALL_V1_MIME_TYPE, TOOL_CALL_V1_PART_MEDIA_TYPE } from '../../src/extensions';
import { parseScenario, playScenario, SCENARIO_ANSWER, SCENARIO_NARRATION } from '../lib/scenario';

interface JsonRpcRequest {
  id?: string | number | null;
  method?: string;
  params?: { message?: { parts?: Array<{ text?: string }> } };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function replyError(res: ServerResponse, id: JsonRpcRequest['id'], code: number, message: string): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message } }));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let rpc: JsonRpcRequest;
  try {
    rpc = JSON.parse(await readBody(req)) as JsonRpcRequest;
  } catch {
    replyError(res, null, -32700, 'parse error');
    return;
  }
  if (rpc.method !== 'SendStreamingMessage') {
    replyError(res, rpc.id, -32601, `method not found: ${String(rpc.method)}`);
    return;
  }
  let scenario;
  try {
    scenario = parseScenario(rpc.params?.message?.parts?.[0]?.text ?? '');
  } catch (err) {
    replyError(res, rpc.id, -32602, (err as Error).message);
    return;
  }
  const taskId = randomUUID();
  const contextId = randomUUID();
  let eventId = 0;
  const send = (result: object): void => {
    res.write(`id: ${++eventId}\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result })}\n\n`);
  };
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  send({ task: { id: taskId, contextId, status: { state: 'TASK_STATE_SUBMITTED' } } });
  const narration = { messageId: `${taskId}-2`, contextId, taskId, role: 'ROLE_AGENT', parts: [{ text: SCENARIO_NARRATION }] };
  send({ statusUpdate: { taskId, contextId, status: { state: 'TASK_STATE_WORKING', message: narration } } });

  // The scenario stops when the client leaves while it plays; once it has played out there is
  // nothing to stop, and the limit pays for nothing it does not need (as toolstream's executor).
  const abort = new AbortController();
  let ended = false;
  res.on('close', () => {
    if (!ended) abort.abort();
  });
  await playScenario(
    scenario,
    (frame) =>
      send({
        artifactUpdate: {
          taskId,
          contextId,
          artifact: {
            artifactId: randomUUID(),
            name: TOOL_CALL_V1_ARTIFACT_NAME,
            parts: [{ data: frame, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE }, mediaType: TOOL_CALL_V1_PART_MEDIA_TYPE }],
          },
        },
      }),
    abort.signal,
  );
  ended = true;
  if (abort.signal.aborted) return;
  send({ artifactUpdate: { taskId, contextId, artifact: { artifactId: 'answer', name: 'answer', parts: [{ text: SCENARIO_ANSWER }] }, lastChunk: true } });
  send({ statusUpdate: { taskId, contextId, status: { state: 'TASK_STATE_COMPLETED' } } });
  res.end();
}

/** The limit's whole answer to one request (also the framework floor's route handler, floor-server.ts). */
export function serveLimitRequest(req: IncomingMessage, res: ServerResponse): void {
  handle(req, res).catch((err: unknown) => {
    if (!res.headersSent) replyError(res, null, -32603, (err as Error).message);
    else res.destroy();
  });
}

export function createLimitServer(): Server {
  return createServer(serveLimitRequest);
}

/**
 * (b) The reference architecture, as the reference design builds it: @a2a-js/sdk's
 * DefaultRequestHandler + InMemoryTaskStore behind its express JSON-RPC handler, with an
 * executor that publishes each scripted frame as an artifact-update whose artifact (named
 * `tool-call`) holds one DataPart from our emitToolCall.
 *
 * Artifact ids: the seed gives every frame a fresh artifact (`per-frame`), so the task the
 * store clones per event grows by one artifact per frame; an SDK user who names one artifact
 * per tool call (`per-call`) replaces it on `completed`, and the task grows half as fast.
 */
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { TaskState, type AgentCard, type Artifact, type Message, type Part } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { emitToolCall, TOOL_CALL_V1_ARTIFACT_NAME, toolCallV1AgentExtension } from '../../src/extensions';
import { parseScenario, playScenario } from '../lib/scenario';

export type ReferenceArtifactIds = 'per-frame' | 'per-call';

function dataArtifact(artifactId: string, parts: Part[], name: string): Artifact {
  return { artifactId, name, description: '', parts, metadata: undefined, extensions: [] };
}

function textOf(message: Message): string {
  const first = message.parts[0]?.content;
  return first?.$case === 'text' ? first.value : '';
}

class ScriptedReferenceExecutor implements AgentExecutor {
  /** The reference design never aborts a run on disconnect; only cancelTask ends an idle one. */
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly artifactIds: ReferenceArtifactIds) {}

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    const scenario = parseScenario(textOf(context.userMessage));
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      }),
    );
    const status = (state: TaskState): void =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message: undefined, timestamp: new Date().toISOString() },
          metadata: undefined,
        }),
      );
    status(TaskState.TASK_STATE_WORKING);
    const abort = new AbortController();
    this.running.set(taskId, abort);
    await playScenario(
      scenario,
      (frame) =>
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: dataArtifact(
              this.artifactIds === 'per-frame' ? randomUUID() : `tool-call-${frame.toolCallId}`,
              [emitToolCall(frame)],
              TOOL_CALL_V1_ARTIFACT_NAME,
            ),
            append: false,
            lastChunk: false,
            metadata: undefined,
          }),
        ),
      abort.signal,
    );
    this.running.delete(taskId);
    status(abort.signal.aborted ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED);
    bus.finished();
  }

  async cancelTask(taskId: string): Promise<void> {
    this.running.get(taskId)?.abort();
  }
}

function agentCard(url: string): AgentCard {
  return {
    name: 'reference',
    description: 'The reference architecture, for the benchmark',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [toolCallV1AgentExtension()] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['application/json'],
    skills: [],
    signatures: [],
  };
}

export function createReferenceServer(artifactIds: ReferenceArtifactIds): Server {
  const handler = new DefaultRequestHandler(agentCard('http://127.0.0.1/'), new InMemoryTaskStore(), new ScriptedReferenceExecutor(artifactIds));
  const app = express();
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return createServer(app);
}

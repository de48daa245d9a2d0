import { Role, type Message } from '@a2a-js/sdk';

/** The user message of an empty task (no tool call), as the in-process cost scripts hand it to a TaskRecord or store. */
export function emptyTaskMessage(taskId: string, contextId: string): Message {
  return {
    messageId: `bench-${taskId}`,
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: '{"toolCalls":0,"intervalMs":0}' }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

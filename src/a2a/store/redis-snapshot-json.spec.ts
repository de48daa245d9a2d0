import { Role, Task, TaskState, type Artifact } from '@a2a-js/sdk';
import type { ToolCallArtifactData } from '../../extensions/tool-call-v1';
import { TaskRecord, textPart, toolArtifact } from '../task-record';
import { taskSnapshotBuffer } from './redis-snapshot-json';

const taskSnapshotJson = (t: Task): string => taskSnapshotBuffer(t).toString();

function task(artifacts: Artifact[]): Task {
  return {
    id: 't1',
    contextId: 'c1',
    status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: '2026-12-03T12:00:00.000Z' },
    artifacts,
    history: [{ messageId: 'm1', contextId: 'c1', taskId: 't1', role: Role.ROLE_USER, parts: [textPart('hi')], metadata: undefined, extensions: [], referenceTaskIds: [] }],
    metadata: undefined,
  };
}

const plain = (t: Task): unknown => JSON.parse(JSON.stringify(Task.toJSON(t)));

describe('taskSnapshotBuffer', () => {
  it('is the JSON of Task.toJSON, for tasks with and without artifacts', () => {
    const started: ToolCallArtifactData = { toolCallId: 'a', name: 'calc', phase: 'started', args: { x: 1 } };
    const answer: Artifact = { artifactId: 'answer', name: 'answer', description: '', parts: [textPart('4')], metadata: undefined, extensions: [] };
    for (const t of [task([]), task([toolArtifact(started)]), task([answer, toolArtifact(started), toolArtifact({ toolCallId: 'b', name: 'calc', phase: 'completed', result: 2 })])]) {
      expect(JSON.parse(taskSnapshotJson(t))).toEqual(plain(t));
    }
    const empty: Task = { id: '', contextId: '', status: undefined, artifacts: [toolArtifact(started)], history: [], metadata: undefined };
    expect(JSON.parse(taskSnapshotJson(empty))).toEqual(plain(empty));
  });

  it('follows a tool to its next phase (a new frame), and never reuses a frame\'s JSON for an artifact that differs', () => {
    const started: ToolCallArtifactData = { toolCallId: 'a', name: 'calc', phase: 'started', args: { x: 1 } };
    expect(JSON.parse(taskSnapshotJson(task([toolArtifact(started)])))).toEqual(plain(task([toolArtifact(started)])));
    const completed: ToolCallArtifactData = { toolCallId: 'a', name: 'calc', phase: 'completed', result: 7 };
    const later = task([toolArtifact(completed)]);
    expect(JSON.parse(taskSnapshotJson(later))).toEqual(plain(later));
    // The same frame object under another artifact id or name: serialized for what it is.
    const renamed: Artifact = { ...toolArtifact(completed), artifactId: 'other', name: 'other' };
    expect(JSON.parse(taskSnapshotJson(task([renamed])))).toEqual(plain(task([renamed])));
    const withMetadata: Artifact = { ...toolArtifact(completed), metadata: { k: 'v' } };
    expect(JSON.parse(taskSnapshotJson(task([withMetadata])))).toEqual(plain(task([withMetadata])));
  });

  it('writes multi-byte text at its UTF-8 length (no byte short or left over)', () => {
    const accented: ToolCallArtifactData = { toolCallId: 'é', name: 'calc', phase: 'completed', result: 'naïve 🙂 ünïcödé' };
    const t = task([toolArtifact(accented), toolArtifact({ toolCallId: 'b', name: 'calc', phase: 'started', args: { q: '日本' } })]);
    const buffer = taskSnapshotBuffer(t);
    expect(JSON.parse(buffer.toString())).toEqual(plain(t));
    // Written twice (the second time from the cache): the same bytes.
    expect(taskSnapshotBuffer(t).equals(buffer)).toBe(true);
  });

  it("writes a record's tools from their latest frames' events: the same task as Task.toJSON of its snapshot", () => {
    const message = { messageId: 'm1', contextId: 'cé', taskId: 't1', role: Role.ROLE_USER, parts: [textPart('hi')], metadata: undefined, extensions: [], referenceTaskIds: [] };
    const record = new TaskRecord({ id: 't1', contextId: 'cé', owner: undefined, message, text: 'hi', maxEvents: 100, maxFinishedTools: 2 });
    const check = (): void => {
      const buffer = taskSnapshotBuffer(record.snapshot({ includeArtifacts: false }), record.snapshotArtifacts());
      expect(JSON.parse(buffer.toString())).toEqual(plain(record.snapshot()));
    };
    check();
    record.toolFrame({ toolCallId: 'a', name: 'calc', phase: 'started', args: { q: '日本 🙂' } });
    check();
    record.answer('four ü', false, false);
    record.toolFrame({ toolCallId: 'a', name: 'calc', phase: 'completed', result: 4 });
    record.toolFrame({ toolCallId: 'b', name: 'calc', phase: 'started', args: {} });
    record.toolFrame({ toolCallId: 'b', name: 'calc', phase: 'failed', error: 'no' });
    record.toolFrame({ toolCallId: 'c', name: 'calc', phase: 'completed', result: [1, 'two'] });
    check();
    record.complete('four ü');
    check();
    expect(record.snapshot().artifacts.length).toBeGreaterThan(1);
  });
});

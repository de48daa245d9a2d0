import Ajv2020 from 'ajv/dist/2020';
import schema from './tool-call-v1.schema.json';
import { validateToolCallFrame, type ToolCallArtifactData } from './tool-call-v1';
import { invalidFrames, validFrames } from './fixtures/frames';

const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
const schemaAccepts = ajv.compile(schema);

describe('tool-call-v1 JSON Schema, validator and TypeScript type agree', () => {
  it.each(validFrames)('all three accept %j', (payload) => {
    expect(schemaAccepts(payload)).toBe(true);
    expect(validateToolCallFrame(payload).ok).toBe(true);
  });

  it.each(invalidFrames)('schema and validator both reject %j', ({ payload }) => {
    expect(schemaAccepts(payload)).toBe(false);
    expect(validateToolCallFrame(payload).ok).toBe(false);
  });

  it('the TypeScript type rejects the same shapes (checked by tsc --noEmit)', () => {
    const rejectedByType: unknown[] = [
      // @ts-expect-error phase is not in the union
      { toolCallId: 'c1', name: 'weather', phase: 'running' } satisfies ToolCallArtifactData,
      // @ts-expect-error a started frame carries no result
      { toolCallId: 'c1', name: 'weather', phase: 'started', result: 1 } satisfies ToolCallArtifactData,
      // @ts-expect-error a completed frame carries no args
      { toolCallId: 'c1', name: 'weather', phase: 'completed', args: {} } satisfies ToolCallArtifactData,
      // @ts-expect-error a failed frame's error is a string
      { toolCallId: 'c1', name: 'weather', phase: 'failed', error: { message: 'x' } } satisfies ToolCallArtifactData,
      // @ts-expect-error toolCallId is required
      { name: 'weather', phase: 'started' } satisfies ToolCallArtifactData,
      // @ts-expect-error name is required
      { toolCallId: 'c1', phase: 'started' } satisfies ToolCallArtifactData,
      // @ts-expect-error toolCallId is a string
      { toolCallId: 7, name: 'weather', phase: 'started' } satisfies ToolCallArtifactData,
      // @ts-expect-error parentToolCallId is a string
      { toolCallId: 'c1', name: 'weather', phase: 'started', parentToolCallId: 7 } satisfies ToolCallArtifactData,
    ];
    for (const payload of rejectedByType) {
      expect(schemaAccepts(payload)).toBe(false);
      expect(validateToolCallFrame(payload).ok).toBe(false);
    }
  });
});

import { Part, StreamResponse } from '@a2a-js/sdk';
import {
  TOOL_CALL_V1_EXTENSION_URI,
  TOOL_CALL_V1_MIME_TYPE,
  emitToolCall,
  parseToolCall,
  parseToolCalls,
  toolCallV1AgentExtension,
  checkToolCallFrame,
  validateToolCall,
  validateToolCallFrame,
  type ToolCallArtifactData,
} from './tool-call-v1';
import { invalidFrames, validFrames } from './fixtures/frames';

const frames: ToolCallArtifactData[] = [
  { toolCallId: 'call_1', name: 'weather', phase: 'started', args: { city: 'Paris' } },
  { toolCallId: 'call_1', name: 'weather', phase: 'completed', result: { tempC: 18, sky: 'clear' } },
  { toolCallId: 'call_2', name: 'calculator', phase: 'failed', error: 'division by zero' },
  { toolCallId: 'call_3/call_1', name: 'weather', parentToolCallId: 'call_3', phase: 'completed', result: { tempC: 3 } },
];

function artifactUpdateWire(frame: ToolCallArtifactData): unknown {
  return StreamResponse.toJSON({
    payload: {
      $case: 'artifactUpdate',
      value: {
        taskId: 't1',
        contextId: 'c1',
        artifact: {
          artifactId: 'a1',
          name: 'tool-call',
          description: '',
          parts: [emitToolCall(frame)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: false,
        metadata: undefined,
      },
    },
  });
}

describe('tool-call-v1 contract', () => {
  it('has the URI and MIME type of the spec', () => {
    expect(TOOL_CALL_V1_EXTENSION_URI).toBe('https://proto-labs.ai/a2a/ext/tool-call-v1');
    expect(TOOL_CALL_V1_MIME_TYPE).toBe('application/vnd.protolabs.tool-call-v1+json');
  });

  it('emits an A2A 1.0 DataPart: data content, mimeType in metadata, mediaType application/json', () => {
    const part = emitToolCall(frames[0]);
    expect(part.content).toEqual({ $case: 'data', value: frames[0] });
    expect(part.metadata).toEqual({ mimeType: TOOL_CALL_V1_MIME_TYPE });
    expect(part.mediaType).toBe('application/json');
  });

  it('serialises through the SDK to the wire JSON of ARCHITECTURE.md', () => {
    const wire = JSON.stringify(artifactUpdateWire(frames[0]));
    expect(wire).toBe(
      '{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","name":"tool-call","parts":[' +
        '{"data":{"toolCallId":"call_1","name":"weather","phase":"started","args":{"city":"Paris"}},' +
        '"metadata":{"mimeType":"application/vnd.protolabs.tool-call-v1+json"},"mediaType":"application/json"}]}}}',
    );
  });

  it.each(frames)('round-trips a $phase frame: emit → SDK toJSON → stringify → parse → parseToolCall', (frame) => {
    const viaPart = JSON.parse(JSON.stringify(Part.toJSON(emitToolCall(frame))));
    expect(parseToolCall([viaPart])).toEqual(frame);
    const viaStream = JSON.parse(JSON.stringify(artifactUpdateWire(frame))) as {
      artifactUpdate: { artifact: { parts: unknown[] } };
    };
    expect(parseToolCall(viaStream.artifactUpdate.artifact.parts)).toEqual(frame);
    // and back into the SDK's in-memory shape
    expect(parseToolCall([Part.fromJSON(viaPart)])).toEqual(frame);
  });

  it('carries parentToolCallId on the wire next to the other fields', () => {
    const wire = JSON.stringify(artifactUpdateWire(frames[3]));
    expect(wire).toContain('"data":{"toolCallId":"call_3/call_1","name":"weather","parentToolCallId":"call_3","phase":"completed","result":{"tempC":3}}');
    const part03 = { kind: 'data', data: frames[3], metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } };
    expect(parseToolCall([part03])).toEqual(frames[3]);
  });

  it('reads a frame without parentToolCallId as a top-level frame, and drops an undefined one', () => {
    expect(parseToolCall([emitToolCall(frames[0])])).not.toHaveProperty('parentToolCallId');
    const undefinedParent = { ...frames[0], parentToolCallId: undefined };
    expect(validateToolCallFrame(undefinedParent)).toEqual({ ok: true, frame: frames[0] });
  });

  it('reads the in-memory SDK part', () => {
    expect(parseToolCall([emitToolCall(frames[1])])).toEqual(frames[1]);
  });

  it('reads A2A 0.3 wire parts (kind: "data")', () => {
    const part03 = { kind: 'data', data: frames[2], metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } };
    expect(parseToolCall([{ kind: 'text', text: 'hi' }, part03])).toEqual(frames[2]);
    expect(validateToolCall({ kind: 'text', text: 'x', metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } })).toEqual({
      ok: false,
      reason: 'A2A 0.3 part kind is not "data"',
    });
  });

  it('matches on metadata.mimeType, never on mediaType', () => {
    const byMediaType = { data: frames[0], mediaType: TOOL_CALL_V1_MIME_TYPE };
    expect(parseToolCall([byMediaType])).toBeUndefined();
    const otherMime = { data: frames[0], metadata: { mimeType: 'application/json' } };
    expect(parseToolCall([otherMime])).toBeUndefined();
  });

  it('parseToolCall gives the first valid frame, parseToolCalls all of them in order', () => {
    const parts = [
      { text: 'narration' },
      { data: { phase: 'bogus' }, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } },
      ...frames.map((f) => Part.toJSON(emitToolCall(f))),
    ];
    expect(parseToolCall(parts)).toEqual(frames[0]);
    expect(parseToolCalls(parts)).toEqual(frames);
    expect(parseToolCalls([])).toEqual([]);
  });

  it.each(validFrames)('accepts the valid fixture %j', (payload) => {
    expect(validateToolCallFrame(payload)).toEqual({ ok: true, frame: payload });
    expect(parseToolCall([{ data: payload, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } }])).toEqual(payload);
  });

  it.each(invalidFrames)('rejects the malformed fixture %j with a reason', ({ payload, reason }) => {
    const part = { data: payload, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } };
    const v = validateToolCall(part);
    expect(v.ok).toBe(false);
    expect(!v.ok && v.reason).toContain(reason);
    expect(parseToolCall([part])).toBeUndefined();
    expect(parseToolCalls([part])).toEqual([]);
  });

  it('says why a part is not a tool-call part', () => {
    expect(validateToolCall(null)).toEqual({ ok: false, reason: 'part must be an object, got null' });
    expect(validateToolCall({ text: 'x' })).toMatchObject({ ok: false, reason: expect.stringContaining('mimeType') });
    expect(validateToolCall({ metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } })).toEqual({
      ok: false,
      reason: 'part carries no data',
    });
    expect(
      validateToolCall({ content: { $case: 'text', value: 'x' }, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } }),
    ).toEqual({ ok: false, reason: 'part content is not a data part' });
  });

  it('reads back every in-memory frame emitToolCall makes, also one whose optional field is undefined', () => {
    const frames: ToolCallArtifactData[] = [
      { toolCallId: 'a', name: 'n', phase: 'started', args: undefined },
      { toolCallId: 'b', name: 'n', phase: 'completed', result: undefined },
      { toolCallId: 'c', name: 'n', phase: 'failed', error: undefined },
    ];
    for (const frame of frames) expect(parseToolCall([emitToolCall(frame)])).toMatchObject({ toolCallId: frame.toolCallId, phase: frame.phase });
    expect(validateToolCallFrame({ toolCallId: 'c', name: 'n', phase: 'failed', error: 7 })).toMatchObject({ ok: false, reason: 'error must be a string, got a number' });
  });

  it('checkToolCallFrame gives a fresh frame in wire order for every shape, or the reason as validateToolCallFrame gives it', () => {
    const fields = { started: 'args', completed: 'result', failed: 'error' } as const;
    for (const phase of ['started', 'completed', 'failed'] as const) {
      for (const parent of [undefined, 'absent', 'p1'] as const) {
        for (const timestamp of [undefined, '2026-12-04T15:00:00.000Z'] as const) {
          for (const present of [false, true]) {
            // Fields in an order of their own, and a key the contract does not know.
            const payload: Record<string, unknown> = { extra: 1, phase };
            if (present) payload[fields[phase]] = phase === 'failed' ? 'boom' : { n: 1 };
            if (timestamp !== undefined) payload.timestamp = timestamp;
            if (parent !== 'absent') payload.parentToolCallId = parent;
            Object.assign(payload, { name: 'tool', toolCallId: 'call_1' });
            const wire = ['toolCallId', 'name', ...(parent === 'p1' ? ['parentToolCallId'] : []), ...(timestamp ? ['timestamp'] : []), 'phase', ...(present ? [fields[phase]] : [])];
            const frame = checkToolCallFrame(payload);
            expect(typeof frame === 'object' && Object.keys(frame)).toEqual(wire);
            expect(frame).not.toBe(payload);
            expect(frame).toEqual(Object.fromEntries(wire.map((key) => [key, payload[key]])));
            expect(validateToolCallFrame(payload)).toEqual({ ok: true, frame });
          }
        }
      }
    }
    for (const { payload, reason } of invalidFrames) {
      const checked = checkToolCallFrame(payload);
      expect(checked).toEqual(expect.stringContaining(reason));
      expect(validateToolCallFrame(payload)).toEqual({ ok: false, reason: checked });
    }
    const throwing = Object.defineProperty({}, 'toolCallId', { enumerable: true, get: () => { throw new Error('no'); } });
    expect(checkToolCallFrame(throwing)).toBe('payload could not be read: no');
  });

  it('drops unknown extra fields and keeps the payload values as sent', () => {
    const payload = { toolCallId: 'c', name: 'n', phase: 'completed', result: { a: 1 }, extra: 'x' };
    expect(validateToolCallFrame(payload)).toEqual({
      ok: true,
      frame: { toolCallId: 'c', name: 'n', phase: 'completed', result: { a: 1 } },
    });
  });

  it("reads the other phases' fields, timestamp and parentToolCallId as own fields: inherited ones are not the frame's, an own undefined one is", () => {
    const inherited = Object.assign(Object.create({ args: { a: 1 }, error: 'e', timestamp: 5, parentToolCallId: 7 }) as object, {
      toolCallId: 'c',
      name: 'n',
      phase: 'completed',
      result: 1,
    });
    expect(checkToolCallFrame(inherited)).toEqual({ toolCallId: 'c', name: 'n', phase: 'completed', result: 1 });
    const completed = { toolCallId: 'c', name: 'n', phase: 'completed' };
    expect(checkToolCallFrame({ ...completed, args: undefined })).toBe('"args" belongs to phase started, not completed');
    expect(checkToolCallFrame({ ...completed, error: undefined })).toBe('"error" belongs to phase failed, not completed');
    expect(checkToolCallFrame({ ...completed, phase: 'started', result: undefined })).toBe('"result" belongs to phase completed, not started');
    expect(checkToolCallFrame({ ...completed, timestamp: undefined })).toBe('timestamp must be a string, got a undefined');
    expect(checkToolCallFrame({ ...completed, parentToolCallId: 7 })).toBe('parentToolCallId must be a string, got a number');
  });

  describe('hostile input never throws and never pollutes prototypes', () => {
    const cyclic: Record<string, unknown> = { toolCallId: 'c', name: 'n', phase: 'started' };
    cyclic.args = cyclic;
    const throwing = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor() {
          throw new Error('trap');
        },
        has() {
          throw new Error('trap');
        },
      },
    );
    const hostile: unknown[] = [
      null,
      undefined,
      0,
      NaN,
      'x'.repeat(2 ** 20),
      [],
      [[]],
      [null, 1, 'a', true],
      Symbol('s'),
      () => 1,
      throwing,
      [throwing],
      { metadata: throwing },
      { data: throwing, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } },
      { data: cyclic, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } },
      { data: { toolCallId: 'x'.repeat(2 ** 20), name: 'n', phase: 'x'.repeat(2 ** 20) }, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } },
      JSON.parse(
        '{"data":{"toolCallId":"c","name":"n","phase":"started","__proto__":{"polluted":true}},"metadata":{"mimeType":"application/vnd.protolabs.tool-call-v1+json","__proto__":{"polluted":true}}}',
      ),
      JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'),
    ];

    it.each(hostile.map((h, i) => [i, h]))('case %i', (_i, input) => {
      expect(() => parseToolCall(input)).not.toThrow();
      expect(() => parseToolCall([input])).not.toThrow();
      expect(() => parseToolCalls([input, input])).not.toThrow();
      expect(() => validateToolCall(input)).not.toThrow();
      expect(() => validateToolCallFrame(input)).not.toThrow();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('a cyclic args object is returned as the same value, unwalked', () => {
      const frame = parseToolCall([{ data: cyclic, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } }]);
      expect(frame?.phase).toBe('started');
      expect(frame && 'args' in frame && frame.args).toBe(cyclic);
    });

    it('a __proto__ key in the payload does not become the frame prototype', () => {
      const frame = parseToolCall([
        JSON.parse(
          '{"data":{"toolCallId":"c","name":"n","phase":"started","__proto__":{"polluted":true}},"metadata":{"mimeType":"application/vnd.protolabs.tool-call-v1+json"}}',
        ),
      ]);
      expect(Object.getPrototypeOf(frame)).toBe(Object.prototype);
      expect((frame as unknown as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  it('declares the agent-card entry: uri, description, not required', () => {
    const entry = toolCallV1AgentExtension();
    expect(entry.uri).toBe(TOOL_CALL_V1_EXTENSION_URI);
    expect(entry.required).toBe(false);
    expect(entry.description.length).toBeGreaterThan(10);
    expect(toolCallV1AgentExtension('custom').description).toBe('custom');
  });
});

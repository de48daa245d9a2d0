import { Artifact, Task } from '@a2a-js/sdk';
import { ToolFrameEvent } from '../task-event';

interface CachedArtifact {
  /** The artifact as it was serialized: its other fields must match for the JSON to be reused. */
  artifact: Artifact;
  json: string;
  /** The JSON's length in UTF-8 bytes. */
  bytes: number;
}

/**
 * The JSON of artifacts whose only part is a data part, by that part's value (for a tool's
 * artifact: the tool's current frame, which a later phase replaces, never changes).
 */
const artifactJson = new WeakMap<object, CachedArtifact>();

/** Flat string records (a part's metadata, such as tool-call-v1's mimeType) with the same entries. */
function sameFlat(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  let n = 0;
  for (const key in a) {
    const value = a[key];
    if (typeof value === 'object' && value !== null) return false;
    if (value !== b[key]) return false;
    n += 1;
  }
  for (const _ in b) n -= 1;
  return n === 0;
}

/** Whether `cached` serializes to the same JSON as `artifact` (whose data value it shares). */
function sameArtifact(cached: Artifact, artifact: Artifact): boolean {
  const [a] = cached.parts;
  const [b] = artifact.parts;
  return (
    cached.artifactId === artifact.artifactId &&
    cached.name === artifact.name &&
    cached.description === artifact.description &&
    artifact.metadata === undefined &&
    artifact.extensions.length === 0 &&
    artifact.parts.length === 1 &&
    a.filename === b.filename &&
    a.mediaType === b.mediaType &&
    sameFlat(a.metadata, b.metadata)
  );
}

/** An artifact's JSON and its length in UTF-8 bytes. */
function jsonOfArtifact(artifact: Artifact): { json: string; bytes: number } {
  const part = artifact.parts.length === 1 ? artifact.parts[0] : undefined;
  const value = part?.content?.$case === 'data' ? part.content.value : undefined;
  if (typeof value !== 'object' || value === null) return sized(JSON.stringify(Artifact.toJSON(artifact)));
  const cached = artifactJson.get(value);
  if (cached && sameArtifact(cached.artifact, artifact)) return cached;
  const json = sized(JSON.stringify(Artifact.toJSON(artifact)));
  // Only an artifact of nothing but its one data part is reused (see sameArtifact).
  if (artifact.metadata === undefined && artifact.extensions.length === 0) artifactJson.set(value, { artifact, ...json });
  return json;
}

function sized(json: string): { json: string; bytes: number } {
  return { json, bytes: Buffer.byteLength(json) };
}

/**
 * The UTF-8 of `JSON.stringify(Task.toJSON(task))`, the same object with `artifacts` last,
 * written piece by piece into one buffer. `artifacts` (default: the task's) may give a tool's
 * artifact as its latest frame's event (TaskRecord.snapshotArtifacts), whose JSON holds the
 * artifact's: it is written from there, with no decoding or encoding of the frame. Other artifacts
 * reuse the JSON they were serialized to before. A running task's snapshot is stored once a second
 * and at each state change, and holds up to maxFinishedToolsPerTask finished tools' artifacts:
 * none is serialized again, and the snapshot (tens of kB) is never one string on the heap (joined,
 * it was copied flat once more when the command was written: ~2 kB of heap per frame at 100 paced
 * streams, the largest item of Redis mode's allocation there).
 */
export function taskSnapshotBuffer(task: Task, artifacts: readonly (Artifact | ToolFrameEvent)[] = task.artifacts): Buffer {
  if (artifacts.length === 0) return Buffer.from(JSON.stringify(Task.toJSON({ ...task, artifacts: [] })));
  const head = JSON.stringify(Task.toJSON({ ...task, artifacts: [] }));
  const opening = `${head.slice(0, -1)}${head === '{}' ? '' : ','}"artifacts":[`;
  const jsons = artifacts.map((artifact) => (artifact instanceof ToolFrameEvent ? undefined : jsonOfArtifact(artifact)));
  let bytes = Buffer.byteLength(opening) + artifacts.length - 1 + 2;
  for (let i = 0; i < artifacts.length; i++) bytes += jsons[i]?.bytes ?? (artifacts[i] as ToolFrameEvent).artifactJsonBytes;
  const buffer = Buffer.allocUnsafe(bytes);
  let offset = buffer.write(opening, 0);
  for (let i = 0; i < artifacts.length; i++) {
    if (i > 0) offset = buffer.writeUInt8(0x2c, offset);
    const json = jsons[i];
    offset = json ? offset + buffer.write(json.json, offset) : (artifacts[i] as ToolFrameEvent).writeArtifactJson(buffer, offset);
  }
  buffer.write(']}', offset, 'latin1');
  return buffer;
}

import { Artifact, Task } from '@a2a-js/sdk';

interface CachedArtifact {
  /** The artifact's other fields, which must match for the JSON to be reused. */
  signature: string;
  json: string;
}

/**
 * The JSON of artifacts whose only part is a data part, by that part's value (for a tool's
 * artifact: the tool's current frame, which a later phase replaces, never changes).
 */
const artifactJson = new WeakMap<object, CachedArtifact>();

function signatureOf(artifact: Artifact): string | undefined {
  if (artifact.parts.length !== 1 || artifact.metadata !== undefined || artifact.extensions.length > 0) return undefined;
  const [part] = artifact.parts;
  if (part.content?.$case !== 'data') return undefined;
  return `${artifact.artifactId}\n${artifact.name}\n${artifact.description}\n${part.filename}\n${part.mediaType}\n${JSON.stringify(part.metadata ?? null)}`;
}

function jsonOfArtifact(artifact: Artifact): string {
  const signature = signatureOf(artifact);
  const value = artifact.parts[0]?.content?.$case === 'data' ? artifact.parts[0].content.value : undefined;
  if (signature === undefined || value === undefined || typeof value !== 'object' || value === null) return JSON.stringify(Artifact.toJSON(artifact));
  const cached = artifactJson.get(value);
  if (cached?.signature === signature) return cached.json;
  const json = JSON.stringify(Artifact.toJSON(artifact));
  artifactJson.set(value, { signature, json });
  return json;
}

/**
 * `JSON.stringify(Task.toJSON(task))`, the same object with `artifacts` last, reusing the JSON of
 * artifacts serialized before. A running task's snapshot is stored once a second and at each
 * state change, and holds up to maxFinishedToolsPerTask finished tools' artifacts that do not
 * change between snapshots: each is serialized once instead of at every snapshot.
 */
export function taskSnapshotJson(task: Task): string {
  if (task.artifacts.length === 0) return JSON.stringify(Task.toJSON(task));
  const head = JSON.stringify(Task.toJSON({ ...task, artifacts: [] }));
  let artifacts = '';
  for (const artifact of task.artifacts) artifacts += (artifacts === '' ? '' : ',') + jsonOfArtifact(artifact);
  return `${head.slice(0, -1)}${head === '{}' ? '' : ','}"artifacts":[${artifacts}]}`;
}

import type { Session } from 'node:inspector';

/** One inspector protocol call on an in-process session, as a promise of its result. */
export function inspectorPost<T = unknown>(session: Session, method: string, params: object = {}): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))));
}

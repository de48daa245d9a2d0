import { SetMetadata, type ExecutionContext } from '@nestjs/common';

/** Metadata on toolstream's A2A controllers (the agent card, JSON-RPC, HTTP+JSON): `true`. */
export const A2A_ROUTE = 'toolstream:a2a-route';

/** Marks a controller as serving A2A (see isA2aRoute). */
export const A2aRoute = (): ClassDecorator => SetMetadata(A2A_ROUTE, true);

/**
 * Whether a request is on one of toolstream's A2A routes. A host's global interceptor that maps
 * handlers' results (`{ data: ... }`) or times them out lets these through, as a guard lets a
 * `@Public()` route through: `if (isA2aRoute(context)) return next.handle();`. A2A's bodies and
 * frames are the protocol's, and its streams last as long as their tasks. Nest's Reflector reads
 * the same: `reflector.get(A2A_ROUTE, context.getClass())`.
 */
export function isA2aRoute(context: ExecutionContext): boolean {
  return Reflect.getMetadata(A2A_ROUTE, context.getClass()) === true;
}

import { SetMetadata } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';

/**
 * Which probe a check belongs to. Liveness: the process works (a failure means restart it).
 * Readiness: it should get traffic now (draining, a store it cannot reach); readiness includes
 * every liveness check.
 */
export type HealthProbe = 'liveness' | 'readiness';

/**
 * A module's own health check, as a @nestjs/terminus indicator. A provider implementing it and
 * marked `@ContributesHealth()` joins HealthModule's probes; nothing else needs to know of it.
 *
 * ```ts
 * @Injectable()
 * @ContributesHealth('readiness')
 * export class RedisHealth implements HealthContributor {
 *   async checkHealth(indicator: HealthIndicatorService) {
 *     const session = indicator.check('redis');
 *     return (await this.ping()) ? session.up() : session.down({ message: 'no PONG' });
 *   }
 * }
 * ```
 */
export interface HealthContributor {
  checkHealth(indicator: HealthIndicatorService): HealthIndicatorResult | Promise<HealthIndicatorResult>;
}

export const HEALTH_CONTRIBUTOR = 'toolstream:health-contributor';

/** Marks a HealthContributor provider and names its probe (default: readiness). */
export const ContributesHealth = (probe: HealthProbe = 'readiness'): ClassDecorator => SetMetadata(HEALTH_CONTRIBUTOR, probe);

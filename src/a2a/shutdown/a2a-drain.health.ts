import { Injectable } from '@nestjs/common';
import type { HealthIndicatorService } from '@nestjs/terminus';
import { ContributesHealth, type HealthContributor } from '../../health/health-contributor';
import { A2aDrainService } from './a2a-drain.service';

/** Readiness of the A2A server: down (`draining: true`) once the shutdown drain has begun. */
@Injectable()
@ContributesHealth('readiness')
export class A2aDrainHealth implements HealthContributor {
  constructor(private readonly drain: A2aDrainService) {}

  checkHealth(indicator: HealthIndicatorService) {
    const session = indicator.check('a2a');
    return this.drain.draining ? session.down({ draining: true }) : session.up({ draining: false });
  }
}

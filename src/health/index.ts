export { HealthModule } from './health.module';
export { ContributesHealth, HEALTH_CONTRIBUTOR, type HealthContributor, type HealthProbe } from './health-contributor';

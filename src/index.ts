/** The public API for backends that import toolstream's modules. */
export * from './extensions';
export { HealthModule } from './health/health.module';

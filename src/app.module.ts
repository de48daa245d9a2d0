import { Module } from '@nestjs/common';
import { ExtensionsModule } from './extensions';
import { HealthModule } from './health/health.module';
import { RuntimeModule } from './runtime';

/** The demo application: every toolstream module on its offline defaults. */
@Module({ imports: [ExtensionsModule, RuntimeModule.forRoot({}), HealthModule] })
export class AppModule {}

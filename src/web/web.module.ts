import { Module } from '@nestjs/common';
import { WebController } from './web.controller';
import { ConfigurableModuleClass } from './web.module-definition';
import { WebService } from './web.service';

/**
 * Serves the live tool-timeline page (the client kit bundled for the browser). The page finds
 * the A2A endpoint through the agent card of the same server, so this module imports no other.
 * Import it as `WebModule.forRoot()` (or `forRootAsync`).
 */
@Module({
  controllers: [WebController],
  providers: [WebService],
})
export class WebModule extends ConfigurableModuleClass {}

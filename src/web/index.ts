export { WebModule } from './web.module';
export { WEB_MODULE_OPTIONS, type WebModuleOptions } from './web.module-definition';
export { WebService } from './web.service';

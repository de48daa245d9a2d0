export { WebModule } from './web.module';
export { WEB_MODULE_OPTIONS, type WebModuleOptions, type WebModuleExtras } from './web.module-definition';
export { WebService } from './web.service';

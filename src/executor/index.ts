export * from './executor.types';

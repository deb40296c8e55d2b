export type { Services } from './contracts.js';

export { FieldService, whereString, type FieldServiceOptions } from './client.js';
export { FieldServiceError, type Failure } from './errors.js';
export { Session, type SessionOptions, type Tokens } from './session.js';
export { type RetryOptions } from './transport.js';
export { verifyWebhook, type Delivery } from './webhooks.js';
export type * from './types.js';
export type { components, paths } from './generated/api.js';

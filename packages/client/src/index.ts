export {
  FieldService,
  whereString,
  type ActionMethod,
  type ActionNamespaces,
  type CollectionActions,
  type CollectionViews,
  type ViewMethod,
  type Target,
  type FieldServiceOptions,
  type ItemWriteOptions,
  type Versioned,
  type WriteOptions,
} from './client.js';
export { type FollowOptions } from './events.js';
export { AuthorizationRevokedError, FieldServiceError, type Failure } from './errors.js';
export { ACTIONS, VIEWS } from './generated/actions.js';
export { Session, type SessionOptions, type Tokens } from './session.js';
export { type RetryOptions } from './transport.js';
export { verifyWebhook, type Delivery, type NodeRequest } from './webhooks.js';
export type * from './types.js';
export type { components, paths } from './generated/api.js';

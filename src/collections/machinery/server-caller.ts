import type { Caller } from './collection.js';

/**
 * The server acting on an account by itself (a worker's outcome, a customer on a share page): no
 * user (events with actor null), no client.
 */
export const serverCaller = (services: { config: { publicUrl: string } }, accountId: number, now: number): Caller => ({
  accountId,
  userId: 0,
  role: 'administrator',
  permissions: new Set(),
  clientId: '',
  now,
  publicUrl: services.config.publicUrl,
});

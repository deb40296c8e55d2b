import type { Collection } from './machinery/collection.js';
import { users } from './users/index.js';

/** Every collection the API serves, by name. */
export const collections = new Map<string, Collection>([users].map((c) => [c.name, c]));

import type { Collection } from './machinery/collection.js';
import { users } from './users/index.js';
import { statuses } from './statuses/index.js';
import { clients } from './clients/index.js';
import { jobs } from './jobs/index.js';
import { visits } from './visits/index.js';
import { workgroups } from './workgroups/index.js';
import { files } from './files/index.js';

/** Every collection the API serves, by name. */
export const collections = new Map<string, Collection>([users, statuses, clients, jobs, visits, workgroups, files].map((c) => [c.name, c]));

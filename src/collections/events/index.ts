import { sql } from 'kysely';
import { defineCollection, permissionFor, type Caller, type Collection, type EB } from '../machinery/collection.js';
import type { Registry } from '../machinery/registry.js';
import { eventFields } from './schema.js';
import { contractorSeesEvent, followsJob } from '../policy.js';

export { recordEvents, publicData } from './record.js';
export { purgeEvents } from './retention.js';

/** The collections whose events the caller may read: those it may read itself (token and role). */
export function readableCollections(registry: Registry, caller: Caller): string[] {
  return registry.list
    .filter(
      (c: Collection) =>
        c.recorded !== false &&
        caller.permissions.has(permissionFor(c, 'read')) &&
        c.policy.read[caller.role] !== 'none',
    )
    .map((c) => c.name);
}

/**
 * Whether the events a caller sees depend on their collection alone (the collections it may read),
 * not on each event's row: everyone's but a Contractor's, whose events follow their own work
 * (`own` below). The live streams filter such callers' events in memory (src/http/event-stream.ts).
 */
export const seesEventsByCollection = (caller: Pick<Caller, 'role'>): boolean => caller.role !== 'contractor';

/**
 * `/events`: the outbox of every committed change, read-only. The registry is passed as a
 * function because events are part of it (src/collections/index.ts).
 */
export function eventsCollection(registry: () => Registry) {
  return defineCollection({
    name: 'events',
    table: 'events',
    description: 'Every committed change of an item, in commit order per account (docs/events.md). Read-only.',
    fields: eventFields,
    readOnly: true,
    recorded: false,
    transfer: { exported: false },
    // Counted (migration 091): an Administrator's page of every event reads its count, not a scan.
    counted: true,
    textField: 'type',
    example: (ref) => ({ type: 'jobs.created', collection: 'jobs', item: ref('jobs') }),
    policy: {
      // 'own': the events of the collections the token and the role may read; a Contractor's
      // within those, only what concerns their work (PRODUCT §13, src/collections/policy.ts).
      read: { administrator: 'own', employee: 'own', contractor: 'own' },
      write: { administrator: 'none', employee: 'none', contractor: 'none' },
      // A caller who may read every recorded collection (not a Contractor) sees every event.
      everyRow: (caller: Caller) =>
        seesEventsByCollection(caller) &&
        readableCollections(registry(), caller).length === registry().list.filter((c) => c.recorded !== false).length,
      // A Contractor's events follow their visits (contractorSeesEvent).
      ownReads: ['visits'],
      own: (caller: Caller, eb: EB, table: string) => {
        const names = readableCollections(registry(), caller);
        if (!names.length) return sql<boolean>`1 = 0`;
        if (!seesEventsByCollection(caller)) {
          const jobScoped = [
            'jobs',
            ...registry()
              .list.filter(followsJob)
              .map((c: Collection) => c.name),
          ];
          return contractorSeesEvent(caller, eb, table, names, jobScoped);
        }
        return eb(`${table}.collection`, 'in', names);
      },
    },
  });
}

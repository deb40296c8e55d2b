import { byTheirUser } from '../policy.js';
import { defineCollection } from '../machinery/collection.js';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { geo } from '../machinery/geo.js';

const { account, created } = standardFields({ deleted: false });

export const locationFields: Record<string, Field> = {
  user: f.assoc('user_id', 'users', {
    readOnly: true,
    onDelete: 'cascade',
    members: ['firstName', 'lastName'],
    description: 'Who was there: always the caller.',
  }),
  lat: geo.lat('lat', { required: true, description: 'Latitude, degrees (−90 to 90).' }),
  lng: geo.lng('lng', { required: true, description: 'Longitude, degrees (−180 to 180).' }),
  accuracy: geo.accuracy('accuracy'),
  recordedAt: f.instant('recorded_at', { description: 'When the position was taken; default now (the server clock).' }),
  account,
  created,
};

/**
 * Where crews are, as their apps report it (PRODUCT §11): append-only (PATCH and DELETE are 405),
 * the user always the caller, purged after LOCATIONS_RETENTION_DAYS (./retention.ts). A phone may
 * send one every few seconds: not counted (no count triggers on the write), no rule reads anything.
 */
export const locations = defineCollection({
  name: 'locations',
  table: 'locations',
  description: "Where crews are, sent by their apps: append-only, the caller's own, kept LOCATIONS_RETENTION_DAYS.",
  fields: locationFields,
  appendOnly: true,
  textField: 'recordedAt',
  example: () => ({ lat: 51.5007, lng: -0.1246, accuracy: 12.5, recordedAt: '2030-01-01T09:00:00Z' }),
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'own', employee: 'own', contractor: 'own' },
    own: byTheirUser,
    ownsNew: () => true,
  },
  rules: {
    async fill({ row, caller }) {
      row.user_id = caller.userId;
      if (row.recorded_at === undefined || row.recorded_at === null) row.recorded_at = caller.now;
    },
  },
});

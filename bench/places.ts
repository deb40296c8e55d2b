import type { Workload } from './load.js';

/**
 * PRODUCT §10's rows (issue 29): the jobs nearest a point within 10 km (bench/seed.ts puts every
 * job and client somewhere in Great Britain), and jobs filtered on their client's name. Targets:
 * Wnear at least 0.5 of W1's requests per second, Wassoc at least 0.5 of W2's.
 */
export const PLACES_ROWS = {
  Wnear: 'Wnear GET /jobs?near=53.8,-1.55,10',
  Wassoc: 'Wassoc GET /jobs?where=client.name~jones',
} as const;

export function placesWorkloads(headers: Record<string, string>): Record<keyof typeof PLACES_ROWS, Workload> {
  return {
    Wnear: { headers, path: '/jobs?near=53.8,-1.55,10&recordsPerPage=50' },
    Wassoc: {
      headers,
      path: `/jobs?where=${encodeURIComponent('client.name ~ "jones"')}&recordsPerPage=50&sort=-id`,
    },
  };
}

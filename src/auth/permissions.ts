/** The collections and their permission names: `<collection>.read` and `<collection>.write`. */
export const COLLECTION_NAMES = ['users', 'jobs', 'visits', 'clients', 'statuses', 'workgroups', 'files'] as const;

export const ALL_PERMISSIONS: readonly string[] = COLLECTION_NAMES.flatMap((c) => [`${c}.read`, `${c}.write`]);

export const isPermission = (p: string): boolean => ALL_PERMISSIONS.includes(p);

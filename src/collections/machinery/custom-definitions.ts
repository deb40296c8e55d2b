/**
 * The shapes of custom fields (PRODUCT §12, custom.ts): the value types a definition takes, a
 * definition as the write pipeline reads it, and what a batch keeps of its items' custom fields.
 * Types only beside one list, so the write pipeline's batch names them without importing custom.ts.
 */
export const CUSTOM_TYPES = ['text', 'number', 'boolean', 'date', 'select'] as const;
export type CustomType = (typeof CUSTOM_TYPES)[number];

export interface Definition {
  key: string;
  type: CustomType;
  options: string[] | null;
  required: boolean;
  unique: boolean;
  /** Every value of this unique field is in `custom_unique_values` (migration 092). */
  complete: boolean;
  deleted: boolean;
}

export interface CustomState {
  defs: Map<string, Definition>;
  /** Per item: its values after the write, when the write sets them (create, or a PATCH that sends some). */
  values: (Record<string, unknown> | undefined)[];
  /** Per item: its text custom values, when its searched text is to be made again (searchText). */
  texts: (string[] | undefined)[];
}

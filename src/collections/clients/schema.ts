import { f, standardFields, type Field, type ObjectField } from '../machinery/fields.js';
import { PHONE } from '../users/schema.js';

/**
 * A postal address as one object mapped onto `address_*` columns. Members may be left out; a
 * written address replaces the stored one as a whole (left-out members become empty).
 * Jobs use the same declaration.
 */
export const addressField = (): ObjectField =>
  f.object(
    {
      line1: f.string('address_line1', { nullable: true, maxLength: 200 }),
      line2: f.string('address_line2', { nullable: true, maxLength: 200 }),
      city: f.string('address_city', { nullable: true, maxLength: 100 }),
      region: f.string('address_region', { nullable: true, maxLength: 100 }),
      postcode: f.string('address_postcode', { nullable: true, maxLength: 20 }),
      country: f.string('address_country', { nullable: true, maxLength: 100 }),
    },
    { partial: true },
  );

export const clientFields: Record<string, Field> = {
  name: f.string('name', { required: true, minLength: 1, maxLength: 200 }),
  companyName: f.string('company_name', { nullable: true, maxLength: 200 }),
  email: f.string('email', { nullable: true, maxLength: 254, format: 'email' }),
  phone: f.string('phone', { nullable: true, pattern: PHONE }),
  mobile: f.string('mobile', { nullable: true, pattern: PHONE }),
  address: addressField(),
  notes: f.text('notes', { nullable: true }),
  ...standardFields(),
};

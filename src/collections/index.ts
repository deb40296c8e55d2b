import { createRegistry, type Registry } from './machinery/registry.js';
import { users } from './users/index.js';
import { statuses } from './statuses/index.js';
import { clients } from './clients/index.js';
import { jobs } from './jobs/index.js';
import { visits } from './visits/index.js';
import { workgroups } from './workgroups/index.js';
import { files } from './files/index.js';
import { notes } from './notes/index.js';
import { eventsCollection } from './events/index.js';
import { webhooks } from './webhooks/index.js';
import { deliveries } from './webhooks/deliveries/index.js';
import { timesheets } from './timesheets/index.js';
import { locations } from './locations/index.js';
import { unavailabilities } from './unavailabilities/index.js';
import { sites } from './sites/index.js';
import { contacts } from './contacts/index.js';
import { customFieldDefinitionsCollection } from './customFieldDefinitions/index.js';
import { taxRates } from './taxRates/index.js';
import { products } from './products/index.js';
import { charges } from './charges/index.js';
import { invoices } from './invoices/index.js';
import { payments } from './payments/index.js';
import { quotes } from './quotes/index.js';
import { skills } from './skills/index.js';
import { formTemplates } from './formTemplates/index.js';
import { formSubmissions } from './formSubmissions/index.js';
import { plans } from './plans/index.js';
import { assets } from './assets/index.js';
import { agreements } from './agreements/index.js';
import { messages } from './messages/index.js';

/** Every collection the API serves: the one list everything else is derived from. */
// `events` reads the registry it is part of (which collections a token may see events of), and so does
// `customFieldDefinitions` (the collections whose searched text a deleted text field leaves).
export const registry: Registry = createRegistry([
  users,
  statuses,
  clients,
  jobs,
  visits,
  workgroups,
  files,
  notes,
  eventsCollection(() => registry),
  webhooks,
  deliveries,
  timesheets,
  locations,
  unavailabilities,
  sites,
  contacts,
  customFieldDefinitionsCollection(() => registry),
  taxRates,
  products,
  charges,
  invoices,
  payments,
  quotes,
  skills,
  plans,
  formTemplates,
  formSubmissions,
  assets,
  agreements,
  messages,
]);

/** The permission names: `<collection>.read` and `<collection>.write` of every collection. */
export const ALL_PERMISSIONS: readonly string[] = registry.permissions;

/** The collection names, in registry order (the order permissions are listed in). */
export const COLLECTION_NAMES: readonly string[] = registry.list.map((c) => c.name);

export const isPermission = (p: string): boolean => ALL_PERMISSIONS.includes(p);

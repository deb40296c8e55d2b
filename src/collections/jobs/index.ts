import { validationError, type ApiErrorBody } from '../../errors.js';
import { defineCollection, type TxItemContext } from '../machinery/collection.js';
import type { ObjectField } from '../machinery/fields.js';
import { columnsOf } from '../machinery/kinds/index.js';
import { seesJob } from '../policy.js';
import type { Executor } from '../../db/runner.js';
import { defaultStatus, nextReference } from '../../domain/jobs/new-job.js';
import {
  addressOf,
  assetsOfJob,
  clientOfSite,
  documentsOfJob,
  formsMissing,
  sitesOfAssets,
  statusGroup,
} from './repository.js';
import { jobFields } from './schema.js';
import { book, jobActionDocs, slots } from './actions.js';
import { bookingActionDocs, shareLinkAction, unshareAction } from '../../domain/customers/share-links.js';
import { report, reportDoc } from './report.js';

const idOf = (v: unknown): number | null => (v === null ? null : (v as { id: number }).id);

/** A job's site is a site of its client, whichever of the two a write changes (PRODUCT §10). */
async function check(ctx: TxItemContext<'jobs'>): Promise<ApiErrorBody[]> {
  const { caller, db, op, item, existing } = ctx;
  if (op === 'delete') return deletable(db, caller.accountId, existing!.id);
  const completion = await completable(ctx);
  if (completion.length) return completion;
  const errors = await assetsCheck(ctx);
  if (item.site === undefined && item.client === undefined) return errors;
  const site = item.site !== undefined ? idOf(item.site) : (existing?.site_id ?? null);
  if (site === null) return errors;
  const client = item.client !== undefined ? idOf(item.client) : (existing?.client_id ?? null);
  const ofSite = await clientOfSite(db, caller.accountId, site);
  // A site that does not exist is reported by the reference check (1045).
  if (ofSite === undefined || ofSite === client) return errors;
  return [
    ...errors,
    validationError(
      'invalid',
      'site',
      client === null ? 'a job without a client has no site' : "must be a site of the job's client",
    ),
  ];
}

/**
 * A job is not created in, nor moved to, a status of the `completed` group while one of its forms
 * required to complete it has no submission on it (PRODUCT §17).
 */
async function completable({ caller, db, op, item, existing, once }: TxItemContext<'jobs'>): Promise<ApiErrorBody[]> {
  if (op === 'update' && item.status === undefined) return [];
  const account = caller.accountId;
  const status =
    item.status !== undefined ? idOf(item.status) : await once('defaultStatus', () => defaultStatus(db, account));
  if (status === null || (await statusGroup(db, account, status)) !== 'completed') return [];
  const listed = Array.isArray(item.formTemplates) ? item.formTemplates.map((t: { id: number }) => t.id) : undefined;
  const missing = await formsMissing(db, account, existing?.id, listed);
  if (!missing.length) return [];
  const shown =
    missing
      .slice(0, 5)
      .map((n) => `"${n}"`)
      .join(', ') + (missing.length > 5 ? ', …' : '');
  return [
    validationError(
      'invalid',
      'status',
      `a completed job needs a submission of each form required to complete it (${shown})`,
    ),
  ];
}

/**
 * A job's assets are assets of its site (PRODUCT §16), whichever of the two a write changes: the
 * list sent, else the stored one when the site changes.
 */
async function assetsCheck({ caller, db, item, existing }: TxItemContext<'jobs'>): Promise<ApiErrorBody[]> {
  if (item.assets === undefined && item.site === undefined) return [];
  const site = item.site !== undefined ? idOf(item.site) : (existing?.site_id ?? null);
  const ids =
    item.assets !== undefined
      ? (item.assets as { id: number }[]).map((a) => a.id)
      : existing
        ? await assetsOfJob(db, caller.accountId, existing.id)
        : [];
  if (!ids.length) return [];
  const sites = await sitesOfAssets(db, caller.accountId, ids);
  // An asset that is not the account's is the reference failure alone.
  if (ids.some((id) => !sites.has(id))) return [];
  const stray = ids.filter((id) => sites.get(id) !== site);
  return stray.length
    ? [validationError('invalid', 'assets', `assets ${stray.slice(0, 10).join(', ')} are not of the job's site`)]
    : [];
}

/**
 * Nothing numbered disappears with a job (PRODUCT §9): a job with quotes or invoices, or with
 * charges another invoice bills, is not deleted (its charges would go, and the documents' lines
 * would point at nothing). Drafts can be deleted first; otherwise the job is marked `deleted`.
 */
async function deletable(db: Executor, accountId: number, jobId: number): Promise<ApiErrorBody[]> {
  const documents = await documentsOfJob(db, accountId, jobId);
  if (!documents.length) return [];
  const shown =
    documents.slice(0, 10).join(', ') + (documents.length > 10 ? `, and ${documents.length - 10} more` : '');
  return [
    validationError(
      'inUse',
      'id',
      `the job's quotes and invoices keep it (${shown}); delete its draft invoices, or mark the job deleted instead`,
    ),
  ];
}

/** The columns of an address, the location's two included. */
const ADDRESS_COLUMNS = Object.values((jobFields.address as ObjectField).members).flatMap(columnsOf);

export const jobs = defineCollection({
  name: 'jobs',
  table: 'jobs',
  description: 'Work to be done, usually for a client; scheduled through visits.',
  fields: jobFields,
  customFields: true,
  search: ['title', 'reference', 'description', 'orderNumber', 'address'],
  counted: true,
  example: (ref) => ({
    title: 'Boiler service',
    client: ref('clients'),
    status: ref('statuses'),
    priority: 'high',
    dueDate: '2030-05-01',
  }),
  // PRODUCT §15: a job's bookable slots (GET) and booking one (POST); §17: its report (POST);
  // §18: its booking link (the share links' machinery; the page is src/http/share/pages.ts).
  actions: { slots, book, report, bookingLink: shareLinkAction('jobs'), unshare: unshareAction('jobs') },
  actionDocs: { ...jobActionDocs, report: reportDoc, ...bookingActionDocs },
  getActions: ['slots'],
  policy: {
    read: { administrator: 'all', employee: 'all', contractor: 'own' },
    write: { administrator: 'all', employee: 'all', contractor: 'own' },
    // Slots, booking and the report are the office's (PRODUCT §15, §17); so are links to customers.
    actions: {
      slots: { roles: ['administrator', 'employee'], why: 'slots and booking are not for Contractors' },
      book: { roles: ['administrator', 'employee'], why: 'slots and booking are not for Contractors' },
      report: { roles: ['administrator', 'employee'], why: 'the job report is not for Contractors' },
      bookingLink: {
        roles: ['administrator', 'employee'],
        why: 'bookingLink and unshare are for Administrators and Employees',
      },
      unshare: {
        roles: ['administrator', 'employee'],
        why: 'bookingLink and unshare are for Administrators and Employees',
      },
    },
    // Deleting a job deletes every visit on it, other people's too: not a contractor's call.
    delete: { roles: ['administrator', 'employee'], why: 'contractors cannot delete jobs' },
    // A job is a contractor's when one of its visits is assigned to them. No `ownsNew`: they cannot create jobs.
    own: (caller, eb, table) => seesJob(caller, eb, `${table}.id`),
    ownReads: ['visits'],
  },
  rules: {
    check,
    async fill({ caller, db, op, item, row, once }) {
      if (op !== 'create') return;
      row.created_by = caller.userId;
      if (row.status_id === undefined) {
        row.status_id = await once('defaultStatus', () => defaultStatus(db, caller.accountId));
      }
      if (row.reference === undefined) row.reference = await nextReference(db, caller.accountId);
      // Without an address (`address: null` is one: none), a copy of the site's, else the client's.
      if (item.address === undefined) {
        const site = row.site_id ?? null;
        const client = row.client_id ?? null;
        const copied =
          (site !== null ? await addressOf(db, 'sites', caller.accountId, site, ADDRESS_COLUMNS) : undefined) ??
          (client !== null ? await addressOf(db, 'clients', caller.accountId, client, ADDRESS_COLUMNS) : undefined);
        if (copied) Object.assign(row, copied);
      }
    },
  },
});

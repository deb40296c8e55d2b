import { f, kinds, standardFields, type Field } from '../machinery/fields.js';
import { linkList } from '../machinery/links.js';

export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

// Logically deleted clients and statuses stay readable on old jobs but cannot be newly referenced.
const live = { deleted: 0 };

export const jobFields: Record<string, Field> = {
  title: f.string('title', { required: true, minLength: 1, maxLength: 200, contains: true }),
  reference: f.string('reference', {
    minLength: 1,
    maxLength: 50,
    unique: 'account',
    description: 'Unique in the account; generated as J-000123 when not given.',
  }),
  description: f.text('description', { nullable: true }),
  client: f.assoc('client_id', 'clients', { nullable: true, referenceFilter: live, members: ['name'] }),
  site: f.assoc('site_id', 'sites', {
    nullable: true,
    referenceFilter: live,
    members: ['name'],
    description: "A site of the job's client (a job without a client has none).",
  }),
  // No ON DELETE action: a status still used by a job cannot be deleted (1051).
  status: f.assoc('status_id', 'statuses', {
    referenceFilter: live,
    description: "Default: the account's default status.",
    members: ['label', 'colour', 'group', 'isDefault'],
  }),
  priority: f.enum('priority', PRIORITIES, { default: 'normal' }),
  orderNumber: f.string('order_number', { nullable: true, maxLength: 100 }),
  address: { ...kinds.address(), description: "Without one on create: a copy of the site's, else the client's." },
  distance: kinds.distance(),
  dueDate: f.date('due_date', { nullable: true, description: 'A calendar date, YYYY-MM-DD.' }),
  createdBy: f.assoc('created_by', 'users', {
    readOnly: true,
    nullable: true,
    members: ['firstName', 'lastName'],
  }),
  requiredSkills: linkList({
    through: 'job_skills',
    own: 'job_id',
    other: 'skill_id',
    target: 'skills',
    members: ['name'],
    oneWay: true,
    description: 'The skills whoever does the job must hold (plans and slots match them).',
  }),
  formTemplates: linkList({
    through: 'job_form_templates',
    own: 'job_id',
    other: 'form_template_id',
    target: 'formTemplates',
    members: ['name', 'requiredToComplete'],
    oneWay: true,
    // Not in the default set: the hot item read (W3) stays one statement for the job and one per default list.
    extended: true,
    description:
      'With `fields=*` or `fields=formTemplates`. The forms to fill in on the job; one with `requiredToComplete` needs a submission before the job takes a `completed` status.',
  }),
  assets: linkList({
    through: 'job_assets',
    own: 'job_id',
    other: 'asset_id',
    target: 'assets',
    members: ['name'],
    oneWay: true,
    // Not a default field: a job read by id stays one statement (test/round-trips.test.ts, W3).
    extended: true,
    description:
      "Equipment of the job's site the job services (`where=assets.id = N`: an asset's service history); with `fields=assets` or `*`.",
  }),
  agreement: f.assoc('agreement_id', 'agreements', {
    readOnly: true,
    nullable: true,
    members: ['name'],
    description: 'The service agreement whose occurrence this job is (PRODUCT §16), or null.',
  }),
  occurrence: f.date('occurrence', {
    readOnly: true,
    nullable: true,
    description: "The agreement's date this job is, or null.",
  }),
  ...standardFields(),
};

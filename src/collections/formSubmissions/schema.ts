import { Type } from '@sinclair/typebox';
import { f, standardFields, type Field } from '../machinery/fields.js';
import { PointSchema } from '../machinery/geo.js';
import { validationError } from '../../errors.js';

const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

export const formSubmissionFields: Record<string, Field> = {
  template: f.assoc('template_id', 'formTemplates', {
    required: true,
    referenceFilter: { deleted: 0 },
    onDelete: 'restrict',
    members: ['name', 'version'],
  }),
  job: f.assoc('job_id', 'jobs', {
    required: true,
    referenceFilter: { deleted: 0 },
    onDelete: 'cascade',
    members: ['title', 'reference'],
  }),
  visit: f.assoc('visit_id', 'visits', {
    nullable: true,
    onDelete: 'set null',
    description: 'A visit of the job, or null.',
  }),
  answers: f.json('answers', Type.Record(Type.String(), Type.Unknown()), {
    required: true,
    description:
      "Key → answer, checked against the template's current fields (docs/forms.md): text ≤ 10,000 characters, a finite number, " +
      'a boolean, a date, one option, distinct options, photos `[{id}]` (1–20 image files of the job), a signature ' +
      '`{"file": {id}, "name": "…"}` (a PNG file of the job). Failures name `answers.<key>`.',
    check: (v, name) => (isObject(v) ? [] : [validationError('invalid', name, 'must be an object of key → answer')]),
    // Photos `[{id}]` and a signature's `file`: the files an account's import remaps.
    references: { '*[]': 'files', '*.file': 'files' },
  }),
  location: f.json('location', PointSchema, { nullable: true, description: 'Where it was filled in, or null.' }),
  supersedes: f.assoc('supersedes_id', 'formSubmissions', {
    nullable: true,
    onDelete: 'set null',
    description: 'An earlier submission of the same template and job this one corrects, or null.',
  }),
  templateVersion: f.integer('template_version', {
    readOnly: true,
    minimum: 1,
    description: "The template's version the answers were checked against.",
  }),
  submittedBy: f.assoc('submitted_by', 'users', {
    readOnly: true,
    nullable: true,
    members: ['firstName', 'lastName'],
    description: 'Who submitted it (null once that user was deleted).',
  }),
  submitted: f.string('submitted', {
    readOnly: true,
    format: 'date-time',
    description: 'When it was submitted (UTC), exactly as hashed.',
  }),
  sha256: f.string('sha256', {
    readOnly: true,
    pattern: '^[0-9a-f]{64}$',
    description:
      'SHA-256 (lower-case hex) of the RFC 8785 canonical JSON of {template, templateVersion, job, visit, answers, submittedBy, submitted}, ' +
      'files inside answers replaced by their sha256 (docs/forms.md).',
  }),
  ...standardFields({ deleted: false }),
};

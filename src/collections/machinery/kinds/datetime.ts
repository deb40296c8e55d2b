import { Type } from '@sinclair/typebox';
import { string } from './text.js';
import { ISO_WITH_OFFSET, scalar, type Kind, type ScalarOpts } from './kind.js';

/**
 * An ISO 8601 date-time with its offset, stored as text as given (a user's status time): text in
 * every respect, but a summary reads it as an instant.
 */
export const datetime: Kind = { ...string, noun: 'a date-time', date: () => 'text' };

export const datetimeFields = {
  datetime: (column: string, opts: ScalarOpts = {}) =>
    scalar('datetime', Type.String({ pattern: ISO_WITH_OFFSET, format: 'date-time' }))(column, opts),
};

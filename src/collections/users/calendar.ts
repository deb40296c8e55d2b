import ical, { ICalEventStatus } from 'ical-generator';
import { accountSecret, hashToken, safeEqual } from '../../auth/secrets.js';
import { ApiError } from '../../errors.js';
import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { readByIds } from '../machinery/read.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { calendarVisits, isLiveUser, setCalendarHash, userByCalendarHash } from './repository.js';

/** Where a calendar feed is served (src/http/calendar-feed.ts): the token is the whole secret. */
export const CALENDAR_PATH = '/calendar';

/** The user themself, or an Administrator (PRODUCT §13); another account's user looks missing. */
async function target(request: ActionRequest, name: string): Promise<number> {
  const { caller, item, services } = request;
  if (item === undefined) throw new ApiError('unknownAction', `'${name}' applies to one user: POST /users/:id/${name}`);
  if (!(await isLiveUser(services.database.db, caller.accountId, item))) throw new ApiError('itemNotFound');
  return item;
}

async function answer(request: ActionRequest, id: number) {
  const users = request.services.registry.get('users')!;
  return readByIds(request.services.database.db, users, request.caller, [id], {
    fields: users.defaultFields,
    expand: new Map(),
  });
}

/**
 * `POST /users/:id/calendarLink`: a new feed URL (the old one answers 404 from now on), shown only
 * in this answer (`revealed`: never kept for an Idempotency-Key replay). The token is stored only
 * as its hash.
 */
export async function calendarLink(request: ActionRequest): Promise<ActionAnswer> {
  const id = await target(request, 'calendarLink');
  const token = accountSecret(request.caller.accountId);
  await setCalendarHash(request.services.database.db, request.caller.accountId, id, hashToken(token));
  const items = await answer(request, id);
  const calendarUrl = `${request.caller.publicUrl}${CALENDAR_PATH}/${token}.ics`;
  return {
    status: 200,
    body: { result: 'success', users: items, metadata: NO_ITEMS },
    revealed: { result: 'success', users: items.map((u) => ({ ...u, calendarUrl })), metadata: NO_ITEMS },
  };
}

/** `POST /users/:id/calendarUnlink`: the feed URL answers 404 from now on. */
export async function calendarUnlink(request: ActionRequest): Promise<ActionAnswer> {
  const id = await target(request, 'calendarUnlink');
  await setCalendarHash(request.services.database.db, request.caller.accountId, id, null);
  return { status: 200, body: { result: 'success', users: await answer(request, id), metadata: NO_ITEMS } };
}

export const calendarActionDocs: Record<string, ActionDoc> = {
  calendarLink: {
    on: 'item',
    summary: "Make the user's calendar feed URL",
    description:
      'Answers the user with `calendarUrl`, shown only in this answer: an iCalendar feed of their visits from 30 days ago ' +
      'to 365 days ahead, served without a token. Calling it again replaces the URL. The user themself or an ' +
      'Administrator; permission users.read.',
  },
  calendarUnlink: {
    on: 'item',
    summary: "End the user's calendar feed URL",
    description: 'The feed URL answers 404 from now on. The user themself or an Administrator; permission users.read.',
  },
};

const DAY = 24 * 3600 * 1000;
/** The feed's window (PRODUCT §13): visits overlapping 30 days ago to 365 days ahead. */
export const CALENDAR_WINDOW = { pastDays: 30, aheadDays: 365 };
/** Compared against when a token is unknown, so a wrong token costs what a right one does. */
const NO_HASH = hashToken('no calendar link');

/**
 * The iCalendar feed behind a token (RFC 5545), or undefined (404) for a malformed, wrong, replaced
 * or unlinked token, or a deleted user. The lookup is by the token's hash, compared again in
 * constant time; a miss still runs the visits query (for no user), so both take about as long.
 */
export async function calendarFeed(
  services: ActionRequest['services'],
  token: string,
  now: number,
): Promise<string | undefined> {
  const db = services.database.db;
  const m = /^(\d{1,10})\.[A-Za-z0-9_-]{43}$/.exec(token);
  const accountId = m ? Number(m[1]) : 0;
  const hash = hashToken(token);
  const user = m && accountId <= 2147483647 ? await userByCalendarHash(db, accountId, hash) : undefined;
  const ok = safeEqual(hash, user?.calendar_token_hash ?? NO_HASH) && user !== undefined;
  const visits = await calendarVisits(
    db,
    accountId,
    ok ? user.id : 0,
    now - CALENDAR_WINDOW.pastDays * DAY,
    now + CALENDAR_WINDOW.aheadDays * DAY,
  );
  const cal = ical({
    name: ok ? `Visits: ${[user.first_name, user.last_name].filter(Boolean).join(' ')}` : 'Visits',
    prodId: { company: 'fieldservice-api', product: 'visits', language: 'EN' },
  });
  for (const v of visits) {
    const location = [
      v.address_line1,
      v.address_line2,
      v.address_city,
      v.address_region,
      v.address_postcode,
      v.address_country,
    ]
      .filter((p) => p !== null && p !== '')
      .join(', ');
    cal.createEvent({
      id: `visit-${accountId}-${v.id}@fieldservice-api`,
      start: new Date(Number(v.start_time)),
      end: new Date(Number(v.end_time)),
      // A stamp of the visit's last change, so an unchanged feed is the same bytes (its ETag holds).
      stamp: new Date(Number(v.modified)),
      summary: `${v.label} – ${v.title}`,
      location: location || null,
      description: description(v) || null,
      status: v.state === 'cancelled' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    });
  }
  // RFC 5545 §3.1: every content line ends with CRLF, the last one (END:VCALENDAR) included.
  const text = cal.toString().replace(/(\r\n)?$/, '\r\n');
  return ok ? text : undefined;
}

/** What a crew member needs at the door, one line each: client, phone, job reference, notes. */
function description(v: {
  client_name: string | null;
  client_phone: string | null;
  client_mobile: string | null;
  reference: string;
  title: string;
  notes: string | null;
}): string {
  const phones = [v.client_phone, v.client_mobile].filter((p): p is string => !!p && p !== '');
  return [
    v.client_name ? `Client: ${v.client_name}` : '',
    phones.length ? `Phone: ${[...new Set(phones)].join(', ')}` : '',
    `Job: ${v.reference} – ${v.title}`,
    v.notes ? `Notes: ${v.notes}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

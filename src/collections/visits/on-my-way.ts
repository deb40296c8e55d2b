import { ApiError } from '../../errors.js';
import { travelMatrix } from '../../domain/planning/travel.js';
import type { ActionAnswer, ActionDoc, ActionRequest } from '../machinery/collection.js';
import { accountMoney } from '../machinery/money.js';
import { NO_ITEMS } from '../machinery/write/index.js';
import { serverCaller } from '../machinery/server-caller.js';
import { jobPlace, latestPing, lockVisit, setTravelling, visitCrew } from './repository.js';
import { clientAddress, companyName, firstNameOf } from '../../domain/customers/queries.js';
import { dateFormat, type DateStyle } from '../../time/format.js';

const ETA: DateStyle = { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' };

/** A ping older than this says nothing of where the crew is now. */
const PING_MS = 30 * 60_000;

/** Where the visit's crew and job are: the user's latest ping of the last 30 minutes, the job's address. */
async function places(request: ActionRequest, userId: number | null, jobId: number) {
  const db = request.services.database.db;
  const { accountId, now } = request.caller;
  const ping = userId === null ? undefined : await latestPing(db, accountId, userId, now - PING_MS, now + 60_000);
  const job = await jobPlace(db, accountId, jobId);
  return { ping, job };
}

/**
 * `POST /visits/:id/onMyWay` (PRODUCT §18): a scheduled visit becomes `travelling` with its `eta`
 * (now plus the travel of §15 from the user's latest ping to the job, else null), one event; then,
 * when the job's client has an address, a message saying who is coming and when (the messages
 * collection fails it as `opted out` for a client who opted out). The visit's user, Administrators
 * and Employees.
 */
export async function onMyWay(request: ActionRequest): Promise<ActionAnswer> {
  if (request.item === undefined)
    throw new ApiError('unknownAction', "'onMyWay' applies to one visit: POST /visits/:id/onMyWay");
  const id = request.item;
  const { caller, services } = request;
  const visits = services.registry.get('visits')!;
  const db = services.database.db;
  const seen = await visitCrew(db, caller.accountId, id);
  if (!seen || (caller.role === 'contractor' && seen.user_id !== caller.userId)) throw new ApiError('itemNotFound');
  const { ping, job } = await places(request, seen.user_id, seen.job_id);
  let seconds: number | null = null;
  if (ping && job.address_lat !== null && job.address_lng !== null) {
    const m = await travelMatrix([ping, { lat: job.address_lat, lng: job.address_lng }], {
      speedKmh: services.config.travelSpeedKmh,
      routingUrl: services.config.routingUrl,
    });
    seconds = m.seconds[0][1];
  }
  const eta = seconds === null ? null : caller.now + seconds * 1000;
  const item = await services.writer.transact(caller, async (tx, changes) => {
    const visit = await lockVisit(tx, caller.accountId, id);
    if (!visit || (caller.role === 'contractor' && visit.user_id !== caller.userId)) throw new ApiError('itemNotFound');
    if (visit.deleted) throw new ApiError('visitState', 'the visit is deleted');
    if (visit.state !== 'scheduled')
      throw new ApiError('visitState', `onMyWay takes a scheduled visit; this one is ${visit.state}`);
    await changes.touch(visits, [id]);
    await setTravelling(tx, caller.accountId, id, eta, caller.now);
    await changes.settle();
    return changes.item(visits, id)!;
  });
  await tell(request, seen.user_id, job, seen.job_id, id, eta);
  return { status: 200, body: { result: 'success', visits: [item], metadata: NO_ITEMS } };
}

/** The client's message: who is coming, and the ETA in the account's time zone. */
async function tell(
  request: ActionRequest,
  userId: number | null,
  job: { title: string; client_id: number | null },
  jobId: number,
  visitId: number,
  eta: number | null,
): Promise<void> {
  const { caller, services } = request;
  const db = services.database.db;
  if (job.client_id === null) return;
  const to = await clientAddress(db, caller.accountId, job.client_id);
  if (!to) return;
  const firstName = userId === null ? undefined : await firstNameOf(db, caller.accountId, userId);
  const company = await companyName(db, caller.accountId);
  const { timeZone } = await accountMoney(db, caller.accountId);
  const who = firstName ? `${firstName} from ${company}` : `${company}'s crew`;
  const when = eta === null ? '' : ` and should arrive at about ${dateFormat('en-GB', timeZone, ETA).format(eta)}`;
  // The server writes the message (a Contractor on the way writes no messages themself).
  await services.writer.write({
    collection: services.registry.get('messages')!,
    caller: serverCaller(services, caller.accountId, caller.now),
    op: 'create',
    input: [
      {
        to,
        subject: `${who} is on the way`.slice(0, 200),
        text: `Hello,\n\n${who} is on the way to you for "${job.title}"${when}.\n`,
        client: { id: job.client_id },
        job: { id: jobId },
        visit: { id: visitId },
      },
    ],
  });
}

export const onMyWayDoc: ActionDoc = {
  on: 'item',
  summary: 'Tell the client the crew is on the way',
  description:
    "A scheduled visit becomes `travelling` with `eta` (now plus the travel from the user's latest location of the last 30 minutes to the job's address, else null), and the job's client gets a message saying who is coming and the ETA in the account's time zone (a `failed` message, `opted out`, for a client who opted out). The visit's user, Administrators and Employees; otherwise 422, code of visit states.",
};

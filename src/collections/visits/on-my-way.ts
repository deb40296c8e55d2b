import { ApiError } from '../../errors.js';
import { travelMatrix } from '../../domain/planning/travel.js';
import type { ActionDoc, ActionRequest, RowOf } from '../machinery/collection.js';
import { accountMoney } from '../machinery/money.js';
import { serverCaller } from '../machinery/server-caller.js';
import { jobPlace, latestPing } from './repository.js';
import { itemInScope, transition } from '../machinery/write/transition.js';
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
export const onMyWay = transition<RowOf<'visits'>, Awaited<ReturnType<typeof onTheWay>>>('visits', 'onMyWay', {
  prepare: onTheWay,
  lock: 'no key update',
  from: ['scheduled'],
  needs: 'onMyWay takes a scheduled visit',
  refusal: 'visitState',
  set: ({ input }) => ({ state: 'travelling', eta: input.eta }),
  told: ({ request, input, row }) => tell(request, input.userId, input.job, input.jobId, row.id, input.eta),
});

/** Before the visit is locked: who is on the way to which job, and when they should arrive. */
async function onTheWay(request: ActionRequest, id: number) {
  const { caller, services } = request;
  // As the transition's lock will: a visit the caller may not read is missing (404).
  const seen = (await itemInScope(services.database.db, services.registry.get('visits')!, caller, id)) as
    RowOf<'visits'> | undefined;
  if (!seen) throw new ApiError('itemNotFound');
  const { ping, job } = await places(request, seen.user_id, seen.job_id);
  let seconds: number | null = null;
  if (ping && job.address_lat !== null && job.address_lng !== null) {
    const m = await travelMatrix([ping, { lat: job.address_lat, lng: job.address_lng }], {
      speedKmh: services.config.travelSpeedKmh,
      routingUrl: services.config.routingUrl,
    });
    seconds = m.seconds[0][1];
  }
  return {
    userId: seen.user_id,
    jobId: seen.job_id,
    job,
    eta: seconds === null ? null : caller.now + seconds * 1000,
  };
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

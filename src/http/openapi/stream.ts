import { HEARTBEAT_MS, MAX_STREAMS_PER_TOKEN, STREAM_BUFFER_LIMIT } from '../event-stream.js';

/**
 * The live stream in the OpenAPI document (PRODUCT §13, src/http/event-stream.ts): `GET /events`
 * with `Accept: text/event-stream` answers Server-Sent Events. Added to the list operation the
 * events collection already has, so nothing is written twice.
 */
type Json = Record<string, unknown>;

export const STREAM_PARAMETERS: Record<string, Json> = {
  LastEventId: {
    name: 'Last-Event-ID',
    in: 'header',
    required: false,
    schema: { type: 'string', pattern: '^[0-9]+$' },
    description:
      'With `Accept: text/event-stream`: the id of the last event received; the stream starts after it (it wins over an ' +
      '`id > N` term of `where`). Anything but a non-negative integer is 400 (1002).',
  },
};

const STREAM_DESCRIPTION = [
  'With `Accept: text/event-stream` the answer is a Server-Sent Events stream instead of a page: the same token, ' +
    '`X-Version`, permission (`events.read`) and visibility as the list (a Contractor sees their own work), and the ' +
    'list\'s `where` terms (`collection = "jobs"`) filter it; `fields`, `sort` and paging do not apply.',
  '',
  'Each event is one message, in id order:',
  '',
  '```',
  'id: 1234',
  'event: jobs.created',
  'data: {"id":1234,"type":"jobs.created","collection":"jobs","item":{"id":56},…}',
  '```',
  '',
  '`id` is the event id, `event` its `type`, and `data` the event item as JSON on one line, exactly as ' +
    '`GET /events/{id}` answers it. Lines starting with `:` are comments: `: stream open` first, then ' +
    `\`: heartbeat <ms>\` whenever nothing was sent for ${HEARTBEAT_MS / 1000} s. ` +
    'The stream starts after `Last-Event-ID` (header), else after `where=id > N`, else with the next event ' +
    'committed; an event reaches it within 1 s of its commit, whatever process committed it.',
  '',
  'It ends within 5 s of the token’s expiry or revocation, when the server closes, and when the reader is too slow ' +
    `(more than ${STREAM_BUFFER_LIMIT / 1024} KiB unsent): reconnect with \`Last-Event-ID\` to resume with nothing missed. ` +
    `Refusals come before the stream, as JSON errors: 400 (1002) for a \`Last-Event-ID\` that is not a non-negative ` +
    `integer or a bad \`where\`; 429 (1429, with \`Retry-After\`) for a token that already has ${MAX_STREAMS_PER_TOKEN} ` +
    'open streams; 401, 403 as for the list.',
].join('\n');

/** Adds the stream to `GET /events` (when the document has it): the header, the description and the media type. */
export function withEventStream(paths: Record<string, Json>): Record<string, Json> {
  const list = paths['/events']?.get as Json | undefined;
  if (!list) return paths;
  const responses = list.responses as Record<string, Json>;
  const ok = responses[200];
  const get: Json = {
    ...list,
    summary: `${String(list.summary)}, or follow them live (Accept: text/event-stream)`,
    description: STREAM_DESCRIPTION,
    parameters: [...(list.parameters as Json[]), { $ref: '#/components/parameters/LastEventId' }],
    responses: {
      ...responses,
      200: {
        ...ok,
        description: 'The page of events, or with `Accept: text/event-stream` the stream',
        content: {
          ...(ok.content as Json),
          'text/event-stream': {
            schema: {
              type: 'string',
              description: 'Server-Sent Events: `id`, `event` and `data` lines per event; `:` comments',
            },
          },
        },
      },
    },
  };
  return { ...paths, '/events': { ...paths['/events'], get } };
}

import { DOWNLOAD_PREFIX, LINK_TTL_SECONDS } from './links.js';

/** The signed download route, served beside the dispatcher (download.ts), as the OpenAPI document shows it. */
export const downloadPaths: Record<string, unknown> = {
  [`${DOWNLOAD_PREFIX}/{account}/{id}`]: {
    get: {
      tags: ['files'],
      operationId: 'downloadFile',
      summary: 'Download a file through its signed `downloadUrl` (no bearer token, no X-Version)',
      description: `The link comes from a files item and is valid ${LINK_TTL_SECONDS / 60} minutes from the read that produced it. Serves the exact bytes with the stored Content-Type, \`Content-Disposition: attachment\` and \`X-Content-Type-Options: nosniff\`.`,
      security: [],
      parameters: [
        { name: 'account', in: 'path', required: true, schema: { type: 'integer' } },
        { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
        {
          name: 'expires',
          in: 'query',
          required: true,
          schema: { type: 'integer' },
          description: 'Expiry, Unix seconds',
        },
        {
          name: 'signature',
          in: 'query',
          required: true,
          schema: { type: 'string' },
          description: 'HMAC-SHA256, base64url',
        },
      ],
      responses: {
        200: {
          description: 'The bytes',
          content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
        },
        403: { $ref: '#/components/responses/E403' },
        404: { $ref: '#/components/responses/E404' },
        503: { $ref: '#/components/responses/E503' },
      },
    },
  },
};

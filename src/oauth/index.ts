import type { FastifyInstance } from 'fastify';

/** The authorization server: /oauth2/code (login and consent pages) and /oauth2/token. */
export async function oauthPlugin(_app: FastifyInstance): Promise<void> {}

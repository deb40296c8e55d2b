import type { Executor } from '../../db/tx.js';
import { accountSecret, hashToken } from '../../auth/secrets.js';
import { insertCode } from './repository.js';

/** Authorization codes live 60 s (PRODUCT §2). */
export const CODE_TTL_MS = 60 * 1000;

export interface NewCode {
  clientId: string;
  userId: number;
  accountId: number;
  permissions: string[];
  /** Only when the authorization request sent one: the token request must then repeat it. */
  redirectUri?: string;
  codeChallenge?: string;
  offline: boolean;
}

/** Issues a 256-bit code, stored only as its hash; the code itself is returned once. */
export async function issueCode(db: Executor, c: NewCode, now: number): Promise<string> {
  const code = accountSecret(c.accountId);
  await insertCode(
    db,
    {
      code_hash: hashToken(code),
      client_id: c.clientId,
      user_id: c.userId,
      account_id: c.accountId,
      permissions: JSON.stringify(c.permissions),
      redirect_uri: c.redirectUri ?? null,
      code_challenge: c.codeChallenge ?? null,
      code_challenge_method: c.codeChallenge ? 'S256' : null,
      offline: c.offline ? 1 : 0,
      expires_at: now + CODE_TTL_MS,
      used_at: null,
      replayed_at: null,
      created: now,
    },
    now,
  );
  return code;
}

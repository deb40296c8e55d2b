import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (
  pw: string,
  salt: Buffer,
  len: number,
  opts: crypto.ScryptOptions,
) => Promise<Buffer>;

/** OWASP's scrypt parameters (N=2^17, r=8, p=1). */
const SCRYPT = { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 };
const KEY_LEN = 32;

/** A fresh opaque secret: 256 random bits, base64url. */
export const randomToken = (bytes = 32): string => crypto.randomBytes(bytes).toString('base64url');

/** Tokens, codes and client secrets are high-entropy, so a plain SHA-256 is the right stored form. */
export const hashToken = (token: string): string => crypto.createHash('sha256').update(token).digest('hex');

/**
 * A secret found before its account is known (an access or refresh token, a code, a session
 * cookie): the account's id, a dot, and 256 random bits (`17.Zt3…`). Still opaque to clients; the
 * server finds its row by the hash of the whole string within the account it names (one node of a
 * distributed database; docs/deployment.md), and a changed prefix finds nothing.
 */
export const accountSecret = (accountId: number): string => `${accountId}.${randomToken()}`;

/**
 * How a presented secret is looked up: by its hash, in the account it names. One issued before
 * secrets named their account has no dot (base64url has none): it is found by its hash alone, as
 * long as such secrets live (access tokens 1 h, refresh tokens 60 days without use, codes 60 s,
 * sessions 8 h). A malformed prefix names no account that exists (0): nothing is found.
 */
export function secretKey(secret: string): { hash: string; accountId?: number } {
  const hash = hashToken(secret);
  const dot = secret.indexOf('.');
  if (dot < 0) return { hash };
  const prefix = secret.slice(0, dot);
  const id = /^[1-9][0-9]{0,9}$/.test(prefix) ? Number(prefix) : 0;
  return { hash, accountId: id <= 2 ** 31 - 1 ? id : 0 };
}

export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/** How many passwords this process has hashed: tests check that a refused write hashed none. */
export const passwordsHashed = { count: 0 };

export async function hashPassword(password: string): Promise<string> {
  passwordsHashed.count++;
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password.normalize('NFC'), salt, KEY_LEN, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  // Unknown users still cost one hash, so timing does not tell whether a login exists.
  const parts = (stored ?? DUMMY).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, N, r, p, salt, key] = parts;
  const expected = Buffer.from(key, 'base64');
  const actual = await scrypt(password.normalize('NFC'), Buffer.from(salt, 'base64'), expected.length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return crypto.timingSafeEqual(actual, expected) && stored !== null;
}

const DUMMY = `scrypt$${SCRYPT.N}$8$1$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LEN).toString('base64')}`;

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newMessageId } from './sign.js';

describe('webhook-id', () => {
  it('is msg_ and 16 random bytes in base64url, never the same twice across refills of the random pool', () => {
    const ids = Array.from({ length: 2000 }, newMessageId);
    for (const id of ids) assert.match(id, /^msg_[A-Za-z0-9_-]{22}$/);
    assert.equal(new Set(ids).size, ids.length);
    // 16 bytes each: decoding gives the bytes back, and they are not all alike (no zero-filled pool).
    const bytes = ids.map((id) => Buffer.from(id.slice(4), 'base64url'));
    for (const b of bytes) assert.equal(b.length, 16);
    assert.ok(new Set(bytes.map((b) => b[0])).size > 200, 'first bytes spread over the byte range');
  });
});

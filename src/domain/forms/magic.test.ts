import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { imageKind } from './magic.js';

describe('image magic numbers', () => {
  it('names the image kinds by their first bytes, and nothing else', () => {
    const hex = (s: string) => Buffer.from(s, 'hex');
    assert.equal(imageKind(hex('89504e470d0a1a0a0000000d')), 'png');
    assert.equal(imageKind(hex('ffd8ffe000104a464946')), 'jpeg');
    assert.equal(imageKind(Buffer.from('GIF89a....')), 'gif');
    assert.equal(imageKind(Buffer.from('RIFF\0\0\0\0WEBPVP8 ')), 'webp');
    assert.equal(imageKind(Buffer.from('\0\0\0\x18ftypheic')), 'heic');
    assert.equal(imageKind(Buffer.from('%PDF-1.7')), undefined);
    assert.equal(imageKind(hex('89504e47')), undefined, 'a truncated signature is none');
    assert.equal(imageKind(Buffer.alloc(0)), undefined);
  });
});

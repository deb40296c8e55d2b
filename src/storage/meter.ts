import crypto from 'node:crypto';
import { finished, Transform, type Readable } from 'node:stream';
import { SourceError, TooLargeError } from './blobs.js';

/** The bytes of an upload on their way to a store: hashed and counted as they pass. */
export interface Metered {
  /** What the store reads. It fails with TooLargeError past the limit, SourceError if the source fails. */
  stream: Transform;
  size(): number;
  /** The hex sha256 of everything that passed; call once the stream has ended. */
  digest(): string;
  /** The error the meter itself raised (too large, source failed), to tell it from a store's own. */
  failure(): Error | undefined;
  /** Stops reading the source (after a failure); the source is left intact for the caller. */
  detach(): void;
}

/**
 * Pipes `source` through a hashing byte counter without ever destroying `source` (the request it
 * came from must still be answerable). A source that errors, or closes without ending (a client
 * gone, a multipart part cut short: busboy destroys such a part without an error, possibly before
 * anyone listens), fails the meter, so whatever reads it never waits forever.
 */
export function meter(source: Readable, maxBytes: number): Metered {
  const hash = crypto.createHash('sha256');
  let size = 0;
  let failure: Error | undefined;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done((failure = new TooLargeError(maxBytes)));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  // The meter may fail before its reader is attached (while a store opens its file): its readers see
  // the failure through its destroyed state, and nothing may crash the process meanwhile.
  stream.on('error', () => {});
  // finished() also reports a source that was destroyed before this call.
  const stopWatching = finished(source, { writable: false }, (err) => {
    if (err && !stream.destroyed) stream.destroy((failure = new SourceError(err.message)));
  });
  stream.once('close', () => stopWatching());
  source.pipe(stream);
  return {
    stream,
    size: () => size,
    digest: () => hash.digest('hex'),
    failure: () => failure,
    detach: () => {
      source.unpipe(stream);
      stopWatching();
    },
  };
}

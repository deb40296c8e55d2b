import type Sharp from 'sharp';

/**
 * Photos and signatures made small enough to print (PRODUCT §17's job report): a 12-megapixel
 * phone photo is decoded at a fraction of its size (libvips' shrink-on-load for JPEG), turned by its
 * EXIF orientation, fitted inside `PHOTO_EDGE` pixels (about 400 pixels per inch in the report's photo cells) and written as a JPEG; a signature stays a PNG
 * (it may be transparent), fitted inside `SIGNATURE_EDGE`. sharp is loaded by the first report, as
 * pdfkit is by the first document (documents.ts): a server that renders none does not carry it.
 */
/** 1000: a 4000 × 3000 phone photo is then decoded at exactly 1/4 (libjpeg's DCT scaling), never whole. */
export const PHOTO_EDGE = 1000;
export const SIGNATURE_EDGE = 800;
/** Larger images are not decoded (a decompression bomb), nor bytes past this read. */
const MAX_PIXELS = 60_000_000;

export interface PrintImage {
  data: Buffer;
  width: number;
  height: number;
}

let sharp: Promise<typeof Sharp> | undefined;
const load = () =>
  (sharp ??= import('sharp').then((m) => {
    const lib = m.default as unknown as typeof Sharp;
    // Nothing kept between reports: the memory a report takes is given back after it.
    lib.cache(false);
    // One libvips thread: a report's images are made one at a time, each thread would hold its own buffers.
    lib.concurrency(1);
    return lib;
  }));

/** The image as printed, or undefined when the bytes are no image sharp can read. */
export async function printable(bytes: Buffer, kind: 'photo' | 'signature'): Promise<PrintImage | undefined> {
  const lib = await load();
  const edge = kind === 'photo' ? PHOTO_EDGE : SIGNATURE_EDGE;
  try {
    const pipeline = lib(bytes, { limitInputPixels: MAX_PIXELS, failOn: 'error' })
      .rotate()
      .resize({ width: edge, height: edge, fit: 'inside', withoutEnlargement: true });
    const out =
      kind === 'photo'
        ? await pipeline
            .flatten({ background: '#ffffff' })
            .jpeg({ quality: 72, mozjpeg: false })
            .toBuffer({ resolveWithObject: true })
        : await pipeline.png({ compressionLevel: 9 }).toBuffer({ resolveWithObject: true });
    return { data: out.data, width: out.info.width, height: out.info.height };
  } catch {
    return undefined;
  }
}

/**
 * What a file's first bytes say it is (its "magic number"), whatever type the upload declared:
 * a photo must really be an image, a signature really a PNG (PRODUCT §17).
 */
export type ImageKind = 'png' | 'jpeg' | 'gif' | 'webp' | 'heic' | 'bmp' | 'tiff';

/** How many leading bytes imageKind needs. */
export const MAGIC_BYTES = 16;

export function imageKind(head: Uint8Array): ImageKind | undefined {
  const at = (offset: number, bytes: number[]) => bytes.every((b, i) => head[offset + i] === b);
  const ascii = (offset: number, text: string) =>
    at(
      offset,
      [...text].map((c) => c.charCodeAt(0)),
    );
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (at(0, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'webp';
  if (ascii(4, 'ftyp') && ['heic', 'heix', 'mif1', 'msf1', 'avif'].some((b) => ascii(8, b))) return 'heic';
  if (ascii(0, 'BM')) return 'bmp';
  if (at(0, [0x49, 0x49, 0x2a, 0x00]) || at(0, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  return undefined;
}

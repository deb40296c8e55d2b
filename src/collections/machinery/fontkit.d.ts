/** The part of fontkit (pdfkit's own font reader, MIT) the documents use: which characters a font draws. */
declare module 'fontkit' {
  export interface Font {
    hasGlyphForCodePoint(codePoint: number): boolean;
    ascent: number;
    unitsPerEm: number;
  }
  export function create(buffer: Buffer): Font;
}

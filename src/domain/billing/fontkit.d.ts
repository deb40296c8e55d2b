/** The part of fontkit (pdfkit's own font reader, MIT) the documents use: which characters a font draws. */
declare module 'fontkit' {
  export interface Font {
    hasGlyphForCodePoint(codePoint: number): boolean;
    ascent: number;
    unitsPerEm: number;
    /** What pdfkit calls to lay text out: a parsed font is accepted wherever bytes are. */
    layout(text: string): unknown;
  }
  export function create(buffer: Buffer): Font;
}

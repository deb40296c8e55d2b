import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Font } from 'fontkit';
import type PDFKit from 'pdfkit';

/**
 * The fonts of every PDF the server renders (quotes, invoices, job reports): one choice, here.
 * pdfkit's standard fonts draw WinAnsi only, so a client named `Zoë Łukasiewicz – Café Ärzte 東京`
 * came out garbled. Noto Sans (Latin, Greek, Cyrillic; @embedpdf/fonts-latin) is the main font and
 * Noto Sans JP (Japanese, with the Han characters Chinese shares; @embedpdf/fonts-jp) draws the
 * runs of text the main one has no glyph for. Both are SIL OFL 1.1, shipped inside npm packages,
 * embedded by pdfkit as subsets of the glyphs a document uses (a one-page invoice stays a few
 * tens of KB).
 */
export type FontName = 'regular' | 'bold';

const require = createRequire(import.meta.url);
/** The `fonts/` folder of a font package (its `exports` name only its script, in `dist/`). */
const fontsOf = (pkg: string) => path.join(path.dirname(require.resolve(pkg)), '..', 'fonts');

const FILES = {
  regular: () => path.join(fontsOf('@embedpdf/fonts-latin'), 'NotoSans-Regular.ttf'),
  bold: () => path.join(fontsOf('@embedpdf/fonts-latin'), 'NotoSans-Bold.ttf'),
  cjkRegular: () => path.join(fontsOf('@embedpdf/fonts-jp'), 'NotoSansJP-Regular.otf'),
  cjkBold: () => path.join(fontsOf('@embedpdf/fonts-jp'), 'NotoSansJP-Bold.otf'),
};
type Face = keyof typeof FILES;

type Fontkit = typeof import('fontkit');
/**
 * Noto Sans, read and parsed once per process by the first document (two files of 0.6 MB). The CJK
 * faces (4.5 MB each, about 5 MB of memory parsed and more once drawn) are read only when a
 * document has a character Noto Sans lacks: a server whose documents are all Latin, Greek or
 * Cyrillic never loads them.
 */
let loaded: Promise<{ fontkit: Fontkit; main: Record<FontName, Font> }> | undefined;
const cjkFaces = new Map<Face, Font>();

function load() {
  loaded ??= (async () => {
    const fontkit = (await import('fontkit')) as Fontkit;
    const [regular, bold] = await Promise.all(
      (['regular', 'bold'] as const).map(async (face) => fontkit.create(await fs.promises.readFile(FILES[face]()))),
    );
    return { fontkit, main: { regular, bold } as Record<FontName, Font> };
  })();
  // A failed read (a missing package) is tried again by the next document, not remembered.
  loaded.catch(() => (loaded = undefined));
  return loaded;
}

/** A CJK face, read on its first use (synchronously: text is laid out synchronously), then kept. */
function cjkFace(fontkit: Fontkit, face: Face): Font {
  let font = cjkFaces.get(face);
  if (!font) {
    font = fontkit.create(fs.readFileSync(FILES[face]()));
    cjkFaces.set(face, font);
  }
  return font;
}

/** A piece of text and the registered font that draws it. */
export interface Run {
  font: Face;
  text: string;
}

/** The document's fonts: registered on it, and how a string splits into runs of one font each. */
export interface DocumentFonts {
  runs(text: string, weight: FontName): Run[];
  /**
   * The main font's ascent at `size`, in points: runs of another font are drawn on the main font's
   * baseline by this offset (pdfkit places text by its own font's ascent, which differs).
   */
  ascent(weight: FontName, size: number): number;
}

/**
 * Registers the fonts on a new document and answers how to split text among them: characters the
 * main font lacks go to the CJK font when it has them; spaces and punctuation both fonts have stay
 * in the run they are in, so a name is cut into as few runs as possible.
 */
export async function documentFonts(doc: PDFKit.PDFDocument): Promise<DocumentFonts> {
  const { fontkit, main: fonts } = await load();
  // pdfkit takes a parsed fontkit font as well as bytes (PDFFontFactory.open: any source with
  // `layout`; its types name only bytes): one parse per process, its tables and layout caches shared
  // by every document, each of which still makes its own subset.
  const register = (face: Face, font: Font) => doc.registerFont(face, font as unknown as PDFKit.Mixins.PDFFontSource);
  for (const face of ['regular', 'bold'] as const) register(face, fonts[face]);
  const registered = new Set<Face>();
  /** The CJK face, registered on this document on its first use. */
  const cjkOf = (face: Face): Font => {
    const font = cjkFace(fontkit, face);
    if (!registered.has(face)) {
      register(face, font);
      registered.add(face);
    }
    return font;
  };
  return {
    ascent: (weight, size) => (fonts[weight].ascent / fonts[weight].unitsPerEm) * size,
    runs(text, weight) {
      const main: Face = weight;
      const cjk: Face = weight === 'bold' ? 'cjkBold' : 'cjkRegular';
      const out: Run[] = [];
      for (const ch of text) {
        const cp = ch.codePointAt(0)!;
        const last = out[out.length - 1];
        // Shared characters (space, digits, punctuation) keep the current run's font; the CJK font
        // is asked only about a character the main one lacks, or after a CJK run.
        const face = fonts[main].hasGlyphForCodePoint(cp)
          ? last?.font === cjk && cjkOf(cjk).hasGlyphForCodePoint(cp)
            ? cjk
            : main
          : cjkOf(cjk).hasGlyphForCodePoint(cp)
            ? cjk
            : main;
        if (last && last.font === face) last.text += ch;
        else out.push({ font: face, text: ch });
      }
      return out;
    },
  };
}

/** A small seeded generator (xorshift128+ reduced to 32-bit state words): [0, 1) doubles. */
export type Rng = () => number;

export function makeRng(seed: number): Rng {
  let a = (seed ^ 0x9e3779b9) >>> 0 || 1;
  let b = (Math.imul(seed, 0x85ebca6b) ^ 0xc2b2ae35) >>> 0 || 2;
  let c = 0x27d4eb2f;
  let d = 0x165667b1;
  // A few rounds so nearby seeds part ways at once.
  const next = () => {
    const t = a ^ (a << 11);
    a = b;
    b = c;
    c = d;
    d = (d ^ (d >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return d / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

/** A uniform integer in [lo, hi]. */
export const randInt = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

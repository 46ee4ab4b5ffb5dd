// The demo generator's randomness (demo/generate.ts): one seeded PRNG whose draws, consumed in a
// fixed order, make the same records for the same options, and a weighted choice over it.
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hex32 = (x: number) => HEX[x >>> 24]! + HEX[(x >>> 16) & 255]! + HEX[(x >>> 8) & 255]! + HEX[x & 255]!;

/** sfc32: tiny, fast, and a 128-bit state, so 1.7 M records x ~20 draws stays far from its period. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // Hash the seed's text so that any number (negative, fractional, huge) gives a distinct state.
    let h = 0x811c9dc5;
    for (const ch of String(seed)) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
    const split = () => {
      h = (h + 0x9e3779b9) | 0;
      let z = h;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) | 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    for (let i = 0; i < 12; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** [0, 1) */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Integer in [lo, hi]. */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** k decimal digits, zero-padded (k <= 9 so that the draw fits the PRNG's 32 bits). */
  digits(k: number): string {
    return String(this.int(10 ** k)).padStart(k, '0');
  }

  /** A random (version 4, RFC 9562 variant) UUID, but from the seeded stream. */
  uuid(): string {
    const s =
      hex32(this.u32()) +
      hex32(((this.u32() & 0xffff0fff) | 0x4000) >>> 0) +
      hex32(((this.u32() & 0x3fffffff) | 0x80000000) >>> 0) +
      hex32(this.u32());
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }
}

export class Weighted<T> {
  private readonly items: T[] = [];
  private readonly cumulative: number[] = [];
  private total = 0;

  constructor(pairs: readonly (readonly [T, number])[]) {
    for (const [item, weight] of pairs) {
      this.total += weight;
      this.items.push(item);
      this.cumulative.push(this.total);
    }
  }

  pick(rng: Rng): T {
    const x = rng.next() * this.total;
    let i = 0;
    while (i < this.cumulative.length - 1 && x >= this.cumulative[i]!) i++;
    return this.items[i]!;
  }
}

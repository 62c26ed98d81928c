/**
 * Exact rational numbers over BigInt. Answers such as 1/3, 0.125 or 1.5 × 10³ are
 * compared exactly through these, so 0.333 never equals 1/3 by floating-point luck.
 */
export class Rational {
  readonly num: bigint;
  readonly den: bigint;

  constructor(num: bigint, den: bigint = 1n) {
    if (den === 0n) throw new RangeError("division by zero");
    if (den < 0n) {
      num = -num;
      den = -den;
    }
    const g = gcd(num < 0n ? -num : num, den);
    this.num = g > 1n ? num / g : num;
    this.den = g > 1n ? den / g : den;
  }

  static from(value: number | bigint | string): Rational {
    if (typeof value === "bigint") return new Rational(value);
    if (typeof value === "number") {
      if (!Number.isFinite(value)) throw new RangeError(`${value} is not finite`);
      return Rational.parseDecimal(String(value)) as Rational;
    }
    const parsed = Rational.parseDecimal(value);
    if (!parsed) throw new SyntaxError(`"${value}" is not a decimal number`);
    return parsed;
  }

  /** Reads "-12", "3.25", "1.5e-3", ".5"; null for anything else. */
  static parseDecimal(text: string): Rational | null {
    const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
    if (!m) return null;
    const [, sign, intPart = "", fracPart = "", expPart] = m;
    if (intPart === "" && fracPart === "") return null;
    const exp = expPart === undefined ? 0 : Number(expPart);
    if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) return null;
    let num = BigInt((intPart || "0") + fracPart);
    let den = 10n ** BigInt(fracPart.length);
    if (exp > 0) num *= 10n ** BigInt(exp);
    if (exp < 0) den *= 10n ** BigInt(-exp);
    if (sign === "-") num = -num;
    return new Rational(num, den);
  }

  add(o: Rational): Rational {
    return new Rational(this.num * o.den + o.num * this.den, this.den * o.den);
  }
  sub(o: Rational): Rational {
    return new Rational(this.num * o.den - o.num * this.den, this.den * o.den);
  }
  mul(o: Rational): Rational {
    return new Rational(this.num * o.num, this.den * o.den);
  }
  div(o: Rational): Rational {
    return new Rational(this.num * o.den, this.den * o.num);
  }
  neg(): Rational {
    return new Rational(-this.num, this.den);
  }
  /** Integer powers only; a fractional power is not rational in general. */
  pow(exp: bigint): Rational {
    if (exp < 0n) return new Rational(this.den, this.num).pow(-exp);
    return new Rational(this.num ** exp, this.den ** exp);
  }
  isInteger(): boolean {
    return this.den === 1n;
  }
  isZero(): boolean {
    return this.num === 0n;
  }
  equals(o: Rational): boolean {
    return this.num === o.num && this.den === o.den;
  }
  compare(o: Rational): number {
    const d = this.num * o.den - o.num * this.den;
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  toNumber(): number {
    return Number(this.num) / Number(this.den);
  }
  /** "7", "-3/4". */
  toString(): string {
    return this.den === 1n ? String(this.num) : `${this.num}/${this.den}`;
  }
  /** The exact decimal when the denominator divides a power of ten, else null. */
  toDecimalString(): string | null {
    let den = this.den;
    let twos = 0;
    let fives = 0;
    while (den % 2n === 0n) {
      den /= 2n;
      twos++;
    }
    while (den % 5n === 0n) {
      den /= 5n;
      fives++;
    }
    if (den !== 1n) return null;
    const digits = Math.max(twos, fives);
    if (digits === 0) return String(this.num);
    const scaled = (this.num * 10n ** BigInt(digits)) / this.den;
    const negative = scaled < 0n;
    const abs = (negative ? -scaled : scaled).toString().padStart(digits + 1, "0");
    const text = `${abs.slice(0, abs.length - digits)}.${abs.slice(abs.length - digits)}`.replace(/\.?0+$/, "");
    return negative ? `-${text}` : text;
  }
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/**
 * Unit conversion for the `mcp-units` environment: linear units by their factor to one
 * base unit per quantity (NIST SP 811 / the exact international definitions), plus the
 * three temperature scales, which are affine.
 */
export const UNITS = {
  length: { m: 1, km: 1000, cm: 0.01, mm: 0.001, in: 0.0254, ft: 0.3048, yd: 0.9144, mi: 1609.344, nmi: 1852 },
  mass: { kg: 1, g: 0.001, mg: 1e-6, t: 1000, lb: 0.45359237, oz: 0.028349523125, st: 6.35029318 },
  volume: { l: 1, ml: 0.001, m3: 1000, gal: 3.785411784, qt: 0.946352946, pt: 0.473176473, cup: 0.2365882365, floz: 0.0295735295625 },
  speed: { "m/s": 1, "km/h": 1 / 3.6, mph: 0.44704, kn: 1852 / 3600 },
} as const satisfies Record<string, Record<string, number>>;
export const TEMPERATURES = ["C", "F", "K"] as const;

export type Quantity = keyof typeof UNITS;
export const QUANTITIES = Object.keys(UNITS) as Quantity[];
export const UNIT_NAMES: string[] = [...QUANTITIES.flatMap((q) => Object.keys(UNITS[q])), ...TEMPERATURES];

export class UnitError extends Error {
  override name = "UnitError";
}

function quantityOf(unit: string): Quantity | "temperature" | undefined {
  if ((TEMPERATURES as readonly string[]).includes(unit)) return "temperature";
  return QUANTITIES.find((q) => Object.hasOwn(UNITS[q], unit));
}

function toKelvin(value: number, unit: string): number {
  return unit === "K" ? value : unit === "C" ? value + 273.15 : ((value - 32) * 5) / 9 + 273.15;
}

function fromKelvin(kelvin: number, unit: string): number {
  return unit === "K" ? kelvin : unit === "C" ? kelvin - 273.15 : ((kelvin - 273.15) * 9) / 5 + 32;
}

/** `value` in `from` expressed in `to`; both units must measure the same quantity. */
export function convert(value: number, from: string, to: string): number {
  if (!Number.isFinite(value)) throw new UnitError("value must be a finite number");
  const q = quantityOf(from);
  const r = quantityOf(to);
  if (!q) throw new UnitError(`unknown unit "${from}"; units: ${UNIT_NAMES.join(", ")}`);
  if (!r) throw new UnitError(`unknown unit "${to}"; units: ${UNIT_NAMES.join(", ")}`);
  if (q !== r) throw new UnitError(`cannot convert ${q} (${from}) to ${r} (${to})`);
  if (q === "temperature") return fromKelvin(toKelvin(value, from), to);
  const table = UNITS[q] as Record<string, number>;
  return (value * (table[from] as number)) / (table[to] as number);
}

/** A result as the tool prints it: 10 significant digits, no exponent for ordinary sizes. */
export function formatNumber(value: number): string {
  return String(Number(value.toPrecision(10)));
}

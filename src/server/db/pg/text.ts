/**
 * PostgreSQL text cannot hold U+0000, which SQLite stores as given. The JSON columns never
 * meet it (JSON.stringify writes it escaped); the plain-text ones that can carry an
 * environment's or a model endpoint's words (errors, stop reasons) get U+FFFD in its place, rather than fail the step.
 */
export function pgText(value: string | null): string | null {
  return value === null || !value.includes("\u0000") ? value : value.replaceAll("\u0000", "\ufffd");
}

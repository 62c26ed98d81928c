// Kept apart from open.ts so the CLI can tell a URL from a file path without loading the driver.

/** Whether EDGEGYM_DB / --db names a PostgreSQL server rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** The URL with any password replaced, for logs. */
export function redactPostgresUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

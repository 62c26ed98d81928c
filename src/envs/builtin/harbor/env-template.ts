/**
 * Harbor's `${VAR}` / `${VAR:-default}` values in `[environment].env`, `[verifier].env`
 * and `[solution].env` (harbor `utils/env.py`): a value that is exactly one template is
 * read from the host's environment; any other value is a literal, passed as written.
 *
 * Security: under Harbor the "host" is the machine running `harbor run`, so a task can ask
 * for any of its variables — `${OPENAI_API_KEY}` — and have it copied into a container the
 * agent controls. On an edgegym server the host is the server, whose variables hold its
 * own secrets. So the host map is an argument, and the callers pass an EMPTY map unless the
 * operator names the variables that tasks may read. With the empty map, a template with a
 * default takes its default and one without is a load error naming the variable.
 */
import { HarborTaskError } from "./errors.js";

/** The whole value is `${NAME}` or `${NAME:-default}` (default may be empty). */
const TEMPLATE = /^\$\{([^}:]+)(?::-(.*))?\}$/s;

export interface ExpandOptions {
  /** Variables a template may read; never the server's whole `process.env`. */
  hostEnv: Readonly<Record<string, string>>;
  /** For messages: the file and the table (`task.toml`, `[verifier].env`). */
  file: string;
  table: string;
}

/**
 * The table's values with templates read from `hostEnv`.
 *
 * @example expandEnvTemplates({ MODE: "${MODE:-fast}" }, { hostEnv: {}, file: "task.toml", table: "[verifier].env" }) // { MODE: "fast" }
 */
export function expandEnvTemplates(values: Readonly<Record<string, string>>, options: ExpandOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    const match = TEMPLATE.exec(value);
    if (!match) {
      out[key] = value;
      continue;
    }
    const name = (match[1] as string).trim();
    const fromHost = Object.hasOwn(options.hostEnv, name) ? options.hostEnv[name] : undefined;
    if (fromHost !== undefined) out[key] = fromHost;
    else if (match[2] !== undefined) out[key] = match[2];
    else {
      throw new HarborTaskError(
        `${options.file}: ${options.table}.${key} = "${value}" needs the host variable ${name}, and edgegym passes no host variable to a task ` +
          "unless the operator allows it by name (a server's environment holds its secrets). Give the template a default (${" +
          `${name}:-value}) or have the operator allow ${name}.`,
        options.file,
        `${options.table}.${key}`,
      );
    }
  }
  return out;
}

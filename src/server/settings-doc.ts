import { ALL_SETTINGS, type Setting } from "./settings.js";
import { wrapText } from "./text-wrap.js";

const names = (row: Setting): string => [row.flag, row.variable.startsWith("(") ? null : row.variable].filter(Boolean).join(" / ");

/** The settings part of `edgegym serve --help`: one entry each, wrapped to 80 columns; the full text in docs/configuration.md. */
export function settingsUsage(): string {
  const rows = ALL_SETTINGS.filter((row) => !row.variable.startsWith("(") || row.flag !== null);
  const lines = rows.map((row) => `  ${names(row)}${row.runtimes === "both" ? "*" : row.runtimes === "worker" ? " (Worker only)" : ""} (default ${row.default}${row.fileKey ? `; config key ${row.fileKey}` : ""})`);
  return wrapText(`Settings: flags win over variables, variables over the config file (--config).
* = a Worker var too. docs/configuration.md says what each does.
${lines.join("\n")}`);
}

const cell = (s: string): string => s.replaceAll("|", "\\|");
const code = (s: string | null): string => (s && !s.startsWith("(") ? `\`${s}\`` : "");

/** docs/configuration.md, made from the settings table (`npm run docs:config`; a test checks it is current). */
export function configurationDoc(): string {
  const table = ALL_SETTINGS.map(
    (row) => `| ${code(row.flag)} | ${code(row.variable)} | ${code(row.fileKey)} | ${cell(row.default)} | ${{ both: "Node, Worker", node: "Node", worker: "Worker" }[row.runtimes]} | ${cell(row.doc)} |`,
  );
  return `# Configuration of \`edgegym serve\` and the Worker

<!-- Generated from src/server/settings.ts by \`npm run docs:config\`; edit the table there. -->

Every setting is declared once, in \`src/server/settings.ts\`; this page, \`edgegym serve --help\`
and both runtimes' readers are made from it. Flags win over variables, variables over the
config file (\`--config\` / \`EDGEGYM_CONFIG\`, JSON; unknown keys are an error). On a Worker,
settings marked "Worker" are vars or secrets (\`wrangler.jsonc\`, \`wrangler secret put\`).
A value that does not parse stops the server at start with the setting's name.

| flag | variable | config key | default | read by | meaning |
|---|---|---|---|---|---|
${table.join("\n")}

Before the server answers anyone but you, read the [security model](security.md):
API keys make tenants, quotas bound each of them, and \`python\` needs bubblewrap.

\`npx edgegym serve\` takes the same flags. Expired episodes are reaped in the
background: their state and transcript are dropped and a tombstone answers \`410\` for
a week.
`;
}

// Copy-as-curl and copy-as-Python for what was done on the play page: the same calls, in order,
// with the episode id and turns taken from the answers rather than hard-coded. The key is never
// written out: the snippets read it from $EDGEGYM_API_KEY.

export interface PlayLog {
  envId: string;
  reset: Record<string, unknown>;
  steps: Record<string, unknown>[];
  scored: boolean;
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export function curlScript(origin: string, log: PlayLog, withKey: boolean): string {
  const auth = withKey ? ` -H "Authorization: Bearer $EDGEGYM_API_KEY"` : "";
  const post = (path: string, body: unknown): string => `curl -sf -X POST${auth} -H 'Content-Type: application/json' "${origin}${path}" -d ${shellQuote(JSON.stringify(body))}`;
  const lines = [`EP=$(${post(`/v1/envs/${encodeURIComponent(log.envId)}/episodes`, log.reset)} | jq -r .episode_id)`];
  for (const step of log.steps) lines.push(`${post("/v1/episodes/$EP/step", step)} | jq .`);
  if (log.scored) lines.push(`curl -sf -X POST${auth} "${origin}/v1/episodes/$EP/score" | jq .score`);
  return lines.join("\n");
}

/** A Python literal for a JSON value (edgegym's client takes plain dicts). */
export function py(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number" || typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(py).join(", ")}]`;
  return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${py(v)}`).join(", ")}}`;
}

export function pythonScript(origin: string, log: PlayLog, withKey: boolean): string {
  const reset = Object.entries(log.reset).map(([k, v]) => `, ${k}=${py(v)}`).join("");
  const lines = [
    "import os",
    "from edgegym import Client",
    "",
    `client = Client(${py(origin)}${withKey ? ', api_key=os.environ["EDGEGYM_API_KEY"]' : ""})`,
    `episode = client.reset(${py(log.envId)}${reset})`,
    "turn = 0",
  ];
  for (const step of log.steps) {
    // A seated episode's step names its seat.
    const seat = typeof step.seat === "string" ? `, seat=${py(step.seat)}` : "";
    lines.push(`reply = client.step(episode.episode_id, turn, ${py(step.message)}${seat})`, "turn = reply.turn", "print(reply.messages)");
  }
  if (log.scored) lines.push("print(client.score(episode.episode_id).score)");
  return lines.join("\n");
}

/**
 * The rule `npm run deploy` applies before it deploys the Worker: a Worker without API keys
 * answers every /v1 route to anyone on the internet, so it is deployed only when the keys are
 * there or the operator said `--public`. What is checked: `EDGEGYM_API_KEYS` (or
 * `EDGEGYM_ADMIN_API_KEYS`, which also closes /v1) as a non-empty
 * var in the wrangler config (read offline), or as a secret of the deployed Worker (`wrangler
 * secret list`, which asks Cloudflare: secrets are not in any local file). When the secrets
 * cannot be listed (not logged in, the Worker does not exist yet), it refuses and says how
 * to go on.
 */
export type SecretListing = { names: string[] } | { error: string };

export interface DeployKeysInput {
  public: boolean;
  vars: Record<string, unknown>;
  secrets: SecretListing;
}

export type DeployKeysDecision = { deploy: true; reason: string } | { deploy: false; reason: string };

export const KEYS_NAME = "EDGEGYM_API_KEYS";
/** Admin keys alone also close the Worker: with either set, /v1 needs a key. */
export const ADMIN_KEYS_NAME = "EDGEGYM_ADMIN_API_KEYS";
const KEY_NAMES = [KEYS_NAME, ADMIN_KEYS_NAME];

export function deployKeysDecision(input: DeployKeysInput): DeployKeysDecision {
  if (input.public) return { deploy: true, reason: `--public: deploying with no ${KEYS_NAME} check; every /v1 route is open to anyone who finds the URL` };
  for (const name of KEY_NAMES) {
    const fromVars = input.vars[name];
    if (typeof fromVars === "string" && fromVars.split(",").some((k) => k.trim() !== "")) {
      return { deploy: true, reason: `${name} is set as a var in the wrangler config (a secret would keep it out of the config: wrangler secret put ${name})` };
    }
  }
  if ("names" in input.secrets) {
    const secrets = input.secrets.names;
    const found = KEY_NAMES.find((name) => secrets.includes(name));
    if (found) return { deploy: true, reason: `${found} is a secret of the Worker` };
    return { deploy: false, reason: `the Worker has no ${KEYS_NAME} secret, so it would answer anyone. Run \`npx wrangler secret put ${KEYS_NAME}\` (comma-separated keys), or pass --public to deploy an open server on purpose.` };
  }
  return {
    deploy: false,
    reason: `could not list the Worker's secrets to check for ${KEYS_NAME} (${input.secrets.error.trim().split("\n").slice(-3).join(" ")}). Set it with \`npx wrangler secret put ${KEYS_NAME}\` (this also creates the Worker), or pass --public to deploy an open server on purpose.`,
  };
}

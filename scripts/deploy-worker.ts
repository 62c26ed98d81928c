/**
 * `npm run deploy [-- --public] [wrangler deploy options]`: deploys the Worker with
 * `wrangler deploy` after checking that it will require API keys (scripts/deploy-keys.ts says
 * what is checked), building the console it serves first when missing or stale
 * (scripts/ensure-console.sh). `EDGEGYM_WRANGLER` names another wrangler executable (the tests use a fake).
 * With `EDGEGYM_HARBOR_TASKS=DIR[:DIR…]` it deploys the Harbor build (scripts/worker-harbor.ts
 * writes its config: a container class per task image, the tasks bundled). None of the
 * local Docker work-arounds of `npm run dev:worker` is used here.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";
import { deployKeysDecision, type SecretListing } from "./deploy-keys.js";

const args = process.argv.slice(2);
const isPublic = args.includes("--public");
const rest = args.filter((a) => a !== "--public");
const harborTasks = process.env.EDGEGYM_HARBOR_TASKS?.trim();
if (harborTasks) {
  if (rest.some((a) => a === "--config" || a === "-c" || a.startsWith("--config="))) {
    console.error("npm run deploy: EDGEGYM_HARBOR_TASKS writes its own wrangler config; drop --config");
    process.exit(2);
  }
  const built = spawnSync("npx", ["tsx", fileURLToPath(new URL("./worker-harbor.ts", import.meta.url)), harborTasks], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (built.status !== 0) process.exit(built.status ?? 1);
  rest.push("--config", built.stdout.trim());
}
// The environment and config file chosen for the deploy are the ones checked.
const envIndex = rest.findIndex((a) => a === "--env" || a === "-e");
const env = envIndex >= 0 ? rest[envIndex + 1] : rest.find((a) => a.startsWith("--env="))?.slice("--env=".length);
const configIndex = rest.findIndex((a) => a === "--config" || a === "-c");
const configPath = configIndex >= 0 ? rest[configIndex + 1] : undefined;
const scope = [...(env ? ["--env", env] : []), ...(configPath ? ["--config", configPath] : [])];

const wrangler = process.env.EDGEGYM_WRANGLER ?? "wrangler";
const childEnv = { ...process.env, WRANGLER_SEND_METRICS: "false" };

function listSecrets(): SecretListing {
  const run = spawnSync(wrangler, ["secret", "list", "--format", "json", ...scope], { encoding: "utf8", env: childEnv });
  if (run.error) return { error: run.error.message };
  if (run.status !== 0) return { error: run.stderr || run.stdout || `wrangler exited ${run.status}` };
  try {
    const listed = JSON.parse(run.stdout.slice(run.stdout.indexOf("["))) as { name: string }[];
    return { names: listed.map((s) => s.name) };
  } catch {
    return { error: `unreadable output of wrangler secret list: ${run.stdout.slice(0, 200)}` };
  }
}

const config = unstable_readConfig({ config: configPath, env });
const decision = deployKeysDecision({ public: isPublic, vars: config.vars ?? {}, secrets: isPublic ? { names: [] } : listSecrets() });
if (!decision.deploy) {
  console.error(`npm run deploy: refusing to deploy: ${decision.reason}`);
  process.exit(1);
}
console.error(`npm run deploy: ${decision.reason}`);
const assets = spawnSync("bash", [fileURLToPath(new URL("./ensure-console.sh", import.meta.url))], { stdio: "inherit", env: childEnv });
if (assets.status !== 0) process.exit(assets.status ?? 1);
const deploy = spawnSync(wrangler, ["deploy", ...rest], { stdio: "inherit", env: childEnv });
process.exit(deploy.status ?? 1);

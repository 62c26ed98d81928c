#!/usr/bin/env node
/**
 * The local Docker work-arounds that `wrangler dev` with Cloudflare Containers needs on some
 * machines, applied only where needed (dev only; `npm run deploy` never uses any of them):
 *
 * - WRANGLER_DOCKER_BIN=docker-wrapper.sh when `docker buildx version` fails (wrangler's
 *   `docker build --load --provenance=false` needs buildx) or when the networking sidecar image
 *   is local-only (wrangler `docker pull`s it at every start; the wrapper skips pulls of images
 *   that are present);
 * - MINIFLARE_CONTAINER_EGRESS_IMAGE=edgegym/egress-standin:<hash> (egress-standin-image.sh)
 *   when the sidecar image this wrangler pins (cloudflare/proxy-everything:...) is not present
 *   locally; the stand-in does not emulate egress policy (see egress-standin.py);
 * - WRANGLER_DOCKER_HOST=unix://<temp dir>/docker.sock, served in this process by
 *   docker-socket-proxy.mjs, when the daemon's `GET /networks/bridge` has no IPAM Gateway
 *   (Docker 20.10 with an automatic bridge address; workerd needs it).
 *
 * Variables already set by the caller are left as they are. EDGEGYM_CONTAINERS_DEV=off applies
 * none; EDGEGYM_CONTAINERS_DEV_FORCE=docker-bin,egress-standin,socket-proxy applies those even
 * where not needed (to try them on a machine that does not need them).
 *
 *   node scripts/dev-worker/containers-dev.mjs [--config FILE] [--name NAME] [--env ENV] -- COMMAND...
 *       sets up, runs COMMAND with that environment (stdio inherited, SIGINT/SIGTERM forwarded),
 *       then removes the containers named workerd-<worker>-* (wrangler leaves the `-proxy`
 *       sidecars running) and this worker's older cloudflare-dev/<class>:<build id> image tags;
 *       exits with COMMAND's code.
 *   node scripts/dev-worker/containers-dev.mjs --print-env [--config FILE]
 *       prints the environment (KEY=VALUE lines); when the socket proxy is needed it keeps serving
 *       it in the foreground until SIGINT/SIGTERM.
 *   node scripts/dev-worker/containers-dev.mjs --cleanup [--config FILE] [--name NAME] [--env ENV]
 *       only the clean-up.
 *
 * The worker name comes from --name, else the wrangler config (--config/-c, in COMMAND or before
 * `--`, else wrangler.json/.jsonc/.toml found from the working directory up), else "edgegym".
 */
/* global console -- a plain Node script outside the TypeScript build */
import { Buffer } from "node:buffer";
import { execFile, spawn } from "node:child_process";
import { lookup } from "node:dns/promises";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { constants, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { daemonSocketPath, startDockerSocketProxy } from "./docker-socket-proxy.mjs";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
export const WRAPPER = join(here, "docker-wrapper.sh");
export const EGRESS_IMAGE_SCRIPT = join(here, "egress-standin-image.sh");
/** What wrangler 4.156.2 pins (wrangler-dist/cli.js, DEFAULT_CONTAINER_EGRESS_INTERCEPTOR_IMAGE); read afresh from the installed wrangler when possible. */
export const PINNED_EGRESS_IMAGE_FALLBACK =
  "cloudflare/proxy-everything:3cb1195@sha256:0ef6716c52430096900b150d84a3302057d6cd2319dae7987128c85d0733e3c8";
const DEFAULT_WORKER_NAME = "edgegym";
const WORKAROUNDS = ["docker-bin", "egress-standin", "socket-proxy"];

function say(line) {
  console.error(`containers-dev: ${line}`);
}

async function docker(args, timeout = 60_000, env = process.env) {
  return run("docker", args, { timeout, maxBuffer: 16 << 20, env });
}

async function succeeds(file, args, env = process.env, timeout = 30_000) {
  try {
    await run(file, args, { timeout, env });
    return true;
  } catch {
    return false;
  }
}

/** The sidecar image the installed wrangler (from `cwd`, else this project) pulls, read from its code. */
export function pinnedEgressImage(cwd = process.cwd()) {
  for (const base of [cwd, root]) {
    try {
      const require = createRequire(join(base, "package.json"));
      const dist = join(dirname(require.resolve("wrangler/package.json")), "wrangler-dist", "cli.js");
      const match = /DEFAULT_CONTAINER_EGRESS_INTERCEPTOR_IMAGE\s*=\s*"([^"]+)"/.exec(readFileSync(dist, "utf8"));
      if (match) return match[1];
    } catch {
      // not installed there
    }
  }
  return PINNED_EGRESS_IMAGE_FALLBACK;
}

/** The daemon's default bridge network (GET /networks/bridge), or null when no daemon answers. */
export async function bridgeNetwork(socketPath = daemonSocketPath()) {
  return new Promise((resolvePromise) => {
    const req = http.get({ socketPath, path: "/networks/bridge", timeout: 10_000, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        try {
          resolvePromise(res.statusCode === 200 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : null);
        } catch {
          resolvePromise(null);
        }
      });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => resolvePromise(null));
  });
}

/** Whether every IPv4 entry of the network's IPAM.Config has a Gateway (workerd reads it). */
export function hasIpv4Gateway(network) {
  const configs = (network?.IPAM?.Config ?? []).filter((c) => /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(c?.Subnet ?? ""));
  return configs.length > 0 && configs.every((c) => Boolean(c.Gateway));
}

/** Builds (once per content hash) and returns the egress stand-in's tag. */
export async function egressStandinImage(env = process.env) {
  const { stdout } = await run("bash", [EGRESS_IMAGE_SCRIPT], { timeout: 30 * 60_000, maxBuffer: 16 << 20, env });
  const tag = stdout.trim().split("\n").pop() ?? "";
  if (!tag.startsWith("edgegym/egress-standin:")) throw new Error(`egress-standin-image.sh printed no tag: ${stdout.slice(-300)}`);
  return tag;
}

function forcedWorkarounds(env) {
  const forced = new Set(
    (env.EDGEGYM_CONTAINERS_DEV_FORCE ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
  for (const f of forced) if (!WORKAROUNDS.includes(f)) throw new Error(`EDGEGYM_CONTAINERS_DEV_FORCE: unknown work-around ${f} (known: ${WORKAROUNDS.join(", ")})`);
  return forced;
}

/**
 * Decides which work-arounds this machine needs and sets them up. Resolves to `{ env, notes,
 * close }`: `env` holds only the variables to add (merge it over process.env), `notes` one line
 * per work-around used with its reason, `close()` stops the socket proxy (when one was started).
 */
export async function prepareContainersDev({ cwd = process.cwd(), env = process.env, log = say } = {}) {
  const out = {};
  const notes = [];
  const note = (line) => {
    notes.push(line);
    log(line);
  };
  let proxy = null;
  let proxyDir = null;
  const close = async () => {
    await proxy?.close();
    if (proxyDir) rmSync(proxyDir, { recursive: true, force: true });
    proxy = null;
    proxyDir = null;
  };
  if (/^(off|none|0|false)$/i.test(env.EDGEGYM_CONTAINERS_DEV ?? "")) {
    log("EDGEGYM_CONTAINERS_DEV=off: no local Docker work-arounds");
    return { env: out, notes, close };
  }
  const forced = forcedWorkarounds(env);
  let socketPath;
  try {
    socketPath = daemonSocketPath(env);
  } catch (err) {
    log(`${err.message}: the socket proxy cannot be used`);
  }
  const pinned = pinnedEgressImage(cwd);
  const [bridge, buildx, pinnedPresent, daemonUp] = await Promise.all([
    socketPath ? bridgeNetwork(socketPath) : Promise.resolve(null),
    succeeds("docker", ["buildx", "version"], env),
    succeeds("docker", ["image", "inspect", pinned], env),
    succeeds("docker", ["version", "--format", "{{.Server.Version}}"], env),
  ]);
  if (!daemonUp) {
    log("no Docker daemon answers the docker CLI: no local Docker work-arounds (wrangler will say what is missing)");
    return { env: out, notes, close };
  }

  // The networking sidecar image.
  let localOnlyEgress = null;
  if (env.MINIFLARE_CONTAINER_EGRESS_IMAGE) {
    log(`MINIFLARE_CONTAINER_EGRESS_IMAGE=${env.MINIFLARE_CONTAINER_EGRESS_IMAGE} is set: kept`);
  } else if (!pinnedPresent || forced.has("egress-standin")) {
    const tag = await egressStandinImage(env);
    out.MINIFLARE_CONTAINER_EGRESS_IMAGE = tag;
    localOnlyEgress = tag;
    note(
      `MINIFLARE_CONTAINER_EGRESS_IMAGE=${tag}: ${pinnedPresent ? "forced" : `the sidecar image wrangler pins (${pinned}) is not present locally`}; ` +
        "the stand-in does not emulate egress policy (enableInternet: false is not enforced)",
    );
  } else if (!(await registryResolves())) {
    localOnlyEgress = pinned;
  }

  // The docker CLI wrangler runs.
  const wrapperReasons = [];
  if (!buildx) wrapperReasons.push("`docker buildx version` fails (wrangler builds with --load --provenance=false)");
  if (localOnlyEgress) wrapperReasons.push(`wrangler pulls ${localOnlyEgress} at every start and it is in no reachable registry`);
  if (forced.has("docker-bin") && !wrapperReasons.length) wrapperReasons.push("forced");
  if (wrapperReasons.length) {
    if (env.WRANGLER_DOCKER_BIN) log(`WRANGLER_DOCKER_BIN=${env.WRANGLER_DOCKER_BIN} is set: kept (it may need to: ${wrapperReasons.join("; ")})`);
    else {
      out.WRANGLER_DOCKER_BIN = WRAPPER;
      note(`WRANGLER_DOCKER_BIN=${WRAPPER}: ${wrapperReasons.join("; ")}`);
    }
  }

  // The daemon socket workerd drives.
  const gatewayMissing = bridge !== null && !hasIpv4Gateway(bridge);
  if ((gatewayMissing || forced.has("socket-proxy")) && socketPath) {
    if (env.WRANGLER_DOCKER_HOST) log(`WRANGLER_DOCKER_HOST=${env.WRANGLER_DOCKER_HOST} is set: kept`);
    else {
      proxyDir = mkdtempSync(join(tmpdir(), "edgegym-docker-proxy-"));
      proxy = await startDockerSocketProxy({ socketPath: join(proxyDir, "docker.sock"), upstream: socketPath });
      out.WRANGLER_DOCKER_HOST = proxy.url;
      note(
        `WRANGLER_DOCKER_HOST=${proxy.url}: ` +
          (gatewayMissing ? "the daemon's GET /networks/bridge has no IPAM Gateway, which workerd needs" : "forced") +
          ` (served here, a proxy to unix://${socketPath} that fills it in)`,
      );
    }
  }
  return { env: out, notes, close };
}

/** Whether Docker Hub's registry name resolves (a pinned sidecar image present locally cannot be pulled again otherwise). */
async function registryResolves() {
  try {
    await Promise.race([lookup("registry-1.docker.io"), sleep(3_000).then(() => Promise.reject(new Error("timeout")))]);
    return true;
  } catch {
    return false;
  }
}

/** Strips // and /* *\/ comments and trailing commas from JSONC, leaving strings alone. */
export function stripJsonc(text) {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  // Trailing commas, outside strings.
  let result = "";
  for (let k = 0; k < out.length; k++) {
    const c = out[k];
    if (c === '"') {
      let j = k + 1;
      while (j < out.length && out[j] !== '"') j += out[j] === "\\" ? 2 : 1;
      result += out.slice(k, j + 1);
      k = j;
    } else if (c === ",") {
      const next = out.slice(k + 1).match(/^\s*(.)/s)?.[1];
      if (next !== "}" && next !== "]") result += c;
    } else result += c;
  }
  return result;
}

/** The worker's name and container class names from a wrangler config file (JSON, JSONC or TOML). */
export function readWranglerConfig(path, envName) {
  const text = readFileSync(path, "utf8");
  if (path.endsWith(".toml")) {
    const top = text.split(/^\s*\[/m)[0] ?? "";
    const name = /^\s*name\s*=\s*["']([^"']+)["']/m.exec(top)?.[1];
    // [[containers]] tables only (class_name also names Durable Object classes).
    const blocks = text.split(/^\s*\[\[/m).filter((b) => /^(?:env\.[^.\]]+\.)?containers\]\]/.test(b));
    const classNames = blocks.flatMap((b) => [...b.matchAll(/^\s*class_name\s*=\s*["']([^"']+)["']/gm)].map((m) => m[1]));
    return { name: envName && name ? `${name}-${envName}` : name, classNames: [...new Set(classNames)] };
  }
  const config = JSON.parse(stripJsonc(text));
  const envConfig = envName ? config.env?.[envName] : undefined;
  const name = envConfig?.name ?? (envName && config.name ? `${config.name}-${envName}` : config.name);
  const classNames = [...(config.containers ?? []), ...(envConfig?.containers ?? [])].map((c) => c?.class_name).filter(Boolean);
  return { name, classNames: [...new Set(classNames)] };
}

/** wrangler's own search: wrangler.json, wrangler.jsonc, wrangler.toml, from `cwd` up. */
export function findWranglerConfig(cwd = process.cwd()) {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    for (const file of ["wrangler.json", "wrangler.jsonc", "wrangler.toml"]) if (existsSync(join(dir, file))) return join(dir, file);
    if (dirname(dir) === dir) return null;
  }
}

/** The value of a flag in an argument list (`--flag v` or `--flag=v`), the last one winning. */
function flagValue(args, names) {
  let value;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    for (const n of names) {
      if (arg === n && i + 1 < args.length) value = args[i + 1];
      else if (arg.startsWith(`${n}=`)) value = arg.slice(n.length + 1);
    }
  }
  return value;
}

/**
 * Which worker a command runs: name, container class names, config path. Options before `--` win
 * over the command's, which are read only after a `wrangler` word in it (`npx wrangler dev ...`).
 */
export function resolveWorker({ cwd = process.cwd(), own = [], command = [] } = {}) {
  const at = command.findIndex((arg) => /(?:^|\/)wrangler(?:\.[cm]?js)?$/.test(arg));
  const wranglerArgs = at < 0 ? [] : command.slice(at + 1);
  const pick = (names) => flagValue(own, names) ?? flagValue(wranglerArgs, names);
  const configArg = pick(["--config", "-c"]);
  const envName = pick(["--env", "-e"]);
  const configPath = configArg ? resolve(cwd, configArg) : findWranglerConfig(cwd);
  let fromConfig = { name: undefined, classNames: [] };
  if (configPath && existsSync(configPath)) {
    try {
      fromConfig = readWranglerConfig(configPath, envName);
    } catch (err) {
      say(`could not read ${configPath} (${err.message}); using defaults`);
    }
  }
  return { name: pick(["--name"]) ?? fromConfig.name ?? DEFAULT_WORKER_NAME, classNames: fromConfig.classNames, configPath };
}

/** `repo:tag` of the local images of these classes' dev builds (cloudflare-dev/<class lowercased>). */
export async function devImageTags(classNames) {
  const tags = [];
  for (const cls of new Set(classNames.map((c) => c.toLowerCase()))) {
    const { stdout } = await docker(["image", "ls", "--format", "{{.Repository}}:{{.Tag}}", `cloudflare-dev/${cls}`]);
    tags.push(...stdout.split("\n").filter((t) => t && !t.endsWith(":<none>")));
  }
  return tags;
}

/**
 * Removes the containers named workerd-<workerName>-* (app containers and `-proxy` sidecars), and
 * all but one cloudflare-dev/<class>:<build id> tag per class: `keepImageTags` when given (this
 * run's builds), else the most recently tagged image's. Untags only (`docker rmi` without -f).
 */
export async function cleanupContainersDev({ workerName, classNames = [], keepImageTags, log = say } = {}) {
  if (!workerName) throw new Error("cleanupContainersDev: workerName is required");
  const prefix = `workerd-${workerName}-`;
  const removedContainers = [];
  const removedTags = [];
  try {
    const { stdout } = await docker(["ps", "-a", "--filter", `name=${prefix}`, "--format", "{{.ID}}\t{{.Names}}"]);
    const rows = stdout
      .split("\n")
      .map((l) => l.split("\t"))
      .filter(([id, name]) => id && name?.startsWith(prefix));
    if (rows.length) {
      await docker(["rm", "-f", ...rows.map(([id]) => id)], 120_000);
      removedContainers.push(...rows.map(([, name]) => name));
      log(`removed ${rows.length} container(s) named ${prefix}* (wrangler leaves the -proxy sidecars running)`);
    }
  } catch (err) {
    log(`could not remove the ${prefix}* containers: ${err.message}`);
  }
  for (const cls of new Set(classNames.map((c) => c.toLowerCase()))) {
    try {
      const tags = await devImageTags([cls]);
      if (tags.length < 2) continue;
      let keep = tags.filter((t) => keepImageTags?.has(t));
      if (!keep.length) {
        // The image tagged last; any one of its tags keeps its layers as the next build's cache.
        const { stdout } = await docker(["image", "inspect", "--format", "{{json .Metadata.LastTagTime}}", ...tags]);
        const times = stdout.trim().split("\n").map((l) => Date.parse(JSON.parse(l).replace(/(\.\d{3})\d+/, "$1")) || 0);
        keep = [tags[times.indexOf(Math.max(...times))]];
      }
      let removed = 0;
      for (const tag of tags.filter((t) => !keep.includes(t))) {
        try {
          await docker(["rmi", tag]);
          removedTags.push(tag);
          removed++;
        } catch {
          // in use by a container: leave it
        }
      }
      if (removed) log(`removed ${removed} older image tag(s) of cloudflare-dev/${cls} (kept ${keep.join(", ")})`);
    } catch (err) {
      log(`could not tidy the cloudflare-dev/${cls} image tags: ${err.message}`);
    }
  }
  return { removedContainers, removedTags };
}

/** Waits (up to `ms`) until no process of the group is left, then SIGKILLs what remains. */
async function groupGone(pgid, ms = 30_000) {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + ms;
  while (alive() && Date.now() < deadline) await sleep(100);
  if (alive()) {
    say(`processes of the command's group ${pgid} still run ${ms / 1000} s after it exited: killing them`);
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** Runs `command` with the work-arounds, forwards signals, cleans up; resolves to its exit code. */
export async function runWithContainersDev(command, { cwd = process.cwd(), own = [] } = {}) {
  const worker = resolveWorker({ cwd, own, command });
  const setup = await prepareContainersDev({ cwd });
  const before = new Set(await devImageTags(worker.classNames).catch(() => []));
  // On a terminal, Ctrl-C reaches the whole foreground process group, the command's processes
  // included: the command shares ours, and only a repeated SIGINT is forwarded. Elsewhere (a test,
  // a supervisor) a signal reaches this process alone, and `npx` does not pass it on through its
  // `sh -c`: the command gets a process group of its own, and signals go to all of it.
  const ownGroup = !process.stdin.isTTY;
  const child = spawn(command[0], command.slice(1), { cwd, stdio: "inherit", env: { ...process.env, ...setup.env }, detached: ownGroup });
  let sigints = 0;
  const forward = (signal) => {
    if (!ownGroup && signal === "SIGINT" && sigints++ === 0) return;
    try {
      if (ownGroup) process.kill(-child.pid, signal);
      else child.kill(signal);
    } catch {
      // already gone
    }
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, forward);
  const code = await new Promise((resolvePromise) => {
    child.on("error", (err) => {
      say(`could not run ${command[0]}: ${err.message}`);
      resolvePromise(127);
    });
    child.on("exit", (exitCode, signal) => resolvePromise(exitCode ?? 128 + (constants.signals[signal] ?? 1)));
  });
  if (ownGroup && child.pid) await groupGone(child.pid);
  await setup.close();
  const after = await devImageTags(worker.classNames).catch(() => []);
  await cleanupContainersDev({ workerName: worker.name, classNames: worker.classNames, keepImageTags: new Set(after.filter((t) => !before.has(t))) });
  for (const s of signals) process.off(s, forward);
  return code;
}

async function main(argv) {
  const split = argv.indexOf("--");
  const own = split < 0 ? argv : argv.slice(0, split);
  const command = split < 0 ? [] : argv.slice(split + 1);
  if (own.includes("--cleanup")) {
    const worker = resolveWorker({ own, command });
    await cleanupContainersDev({ workerName: worker.name, classNames: worker.classNames });
    return 0;
  }
  if (own.includes("--print-env")) {
    const setup = await prepareContainersDev();
    for (const [k, v] of Object.entries(setup.env)) console.log(`${k}=${v}`);
    if (!setup.env.WRANGLER_DOCKER_HOST) return 0;
    say("serving the Docker socket proxy until SIGINT/SIGTERM");
    await new Promise((resolvePromise) => {
      process.once("SIGINT", resolvePromise);
      process.once("SIGTERM", resolvePromise);
    });
    await setup.close();
    return 0;
  }
  if (!command.length) {
    console.error("usage: node scripts/dev-worker/containers-dev.mjs [--config FILE] [--name NAME] [--env ENV] -- COMMAND...\n       node scripts/dev-worker/containers-dev.mjs --print-env | --cleanup [--config FILE] [--name NAME]");
    return 2;
  }
  return runWithContainersDev(command, { own });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    say(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  }
}

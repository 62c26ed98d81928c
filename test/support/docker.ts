import { execFileSync } from "node:child_process";

/** The image edgegym's own Harbor fixture tasks start FROM (scripts/sandbox-base-image.sh builds it from Debian's packages). */
export const BASE_IMAGE = "edgegym/base:bookworm";

/**
 * Whether the sandbox tests can run here: a Docker daemon answers and has the base image.
 * With EDGEGYM_REQUIRE_DOCKER=1 (CI) a missing one is an error, never a silent skip.
 */
export function dockerReady(): boolean {
  let reason: string | null = null;
  try {
    execFileSync("docker", ["image", "inspect", BASE_IMAGE], { stdio: "ignore", timeout: 20_000 });
  } catch {
    reason = `no Docker daemon answers, or it lacks ${BASE_IMAGE} (run: bash scripts/sandbox-base-image.sh)`;
  }
  if (reason && process.env.EDGEGYM_REQUIRE_DOCKER === "1") throw new Error(`EDGEGYM_REQUIRE_DOCKER=1 but ${reason}`);
  if (reason) console.warn(`sandbox tests skipped: ${reason}`);
  return reason === null;
}

/** Containers carrying a label (`key=value`), as the docker CLI lists them. */
export function containersWith(label: string): string[] {
  return execFileSync("docker", ["ps", "-aq", "--filter", `label=${label}`], { encoding: "utf8", timeout: 20_000 })
    .split("\n")
    .filter(Boolean);
}

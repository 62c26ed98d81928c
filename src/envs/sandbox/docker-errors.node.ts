import { SandboxError } from "./types.js";
import { DockerEngineError } from "./docker-engine.node.js";

/**
 * What an Engine failure means to the sandbox interface. A container the daemon no longer
 * knows (404 "No such container") or that stopped (409 "is not running": its init died) is
 * `sandbox_lost`: the episode's filesystem state is gone or frozen, and starting a fresh one
 * silently would be wrong. Everything else (no daemon, a timeout, a daemon error) is
 * `sandbox_unavailable`: the container may be fine, the call can be retried.
 */
export function toSandboxError(err: unknown, what: string, containerId?: string): SandboxError {
  if (err instanceof SandboxError) return err;
  if (!(err instanceof DockerEngineError)) {
    return new SandboxError("sandbox_unavailable", `${what}: ${err instanceof Error ? err.message : String(err)}`, { containerId });
  }
  if (containerId !== undefined && isContainerGone(err)) {
    return new SandboxError("sandbox_lost", `${what}: container ${containerId} is gone (${err.message})`, { containerId, status: err.status });
  }
  return new SandboxError("sandbox_unavailable", `${what}: ${err.message}`, { containerId, engine: err.code, status: err.status });
}

/** The daemon says the container does not exist or is not running. */
export function isContainerGone(err: DockerEngineError): boolean {
  if (err.code !== "engine_status") return false;
  if (err.status === 404) return /no such container/i.test(err.message);
  if (err.status === 409) return /is not running|is restarting|is dead|marked for removal/i.test(err.message);
  return false;
}

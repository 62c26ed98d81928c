import { hashAs } from "./content-hash.js";
import type { EnvServices } from "./judges.js";
import type { AnyEnvironment, Runtime } from "./types.js";

/** What a registry holds under an id: the runnable environment, or why there is none. */
export type EnvResolution =
  | { status: "found"; env: AnyEnvironment }
  | { status: "not_found"; reason: string }
  | { status: "unavailable"; reason: string };

/**
 * The environments a server runs, by id. Built for one runtime: an environment that
 * cannot run there is kept aside so a reset of it can say so, instead of "not found".
 */
export class EnvRegistry {
  private readonly available = new Map<string, AnyEnvironment>();
  private readonly unavailable = new Map<string, AnyEnvironment>();

  constructor(
    readonly runtime: Runtime,
    envs: readonly AnyEnvironment[] = [],
  ) {
    for (const env of envs) this.register(env);
  }

  register(env: AnyEnvironment): this {
    if (this.available.has(env.id) || this.unavailable.has(env.id)) throw new Error(`environment "${env.id}" is registered twice`);
    (env.runtimes.includes(this.runtime) ? this.available : this.unavailable).set(env.id, env);
    return this;
  }

  /** The runnable environment `id` names; `resolve` says why when there is none. */
  get(id: string): AnyEnvironment | undefined {
    const found = this.resolve(id);
    return found.status === "found" ? found.env : undefined;
  }

  /**
   * The environment `id` names, or why there is none to run: not registered at all, or
   * registered but unable to run here (the wrong runtime, or a sandbox that refuses). The
   * one place that tells the two apart, for the server, the eval jobs and the CLI alike.
   */
  resolve(id: string): EnvResolution {
    const env = this.available.get(id);
    if (env) {
      const refusal = env.isolation?.().refusal;
      return refusal === undefined ? { status: "found", env } : { status: "unavailable", reason: refusal };
    }
    if (this.unavailable.has(id)) {
      return { status: "unavailable", reason: `environment "${id}" cannot run on this runtime (${this.runtime}); serve it from the Node build` };
    }
    return { status: "not_found", reason: `no environment "${id}"` };
  }

  /**
   * The same environments, each wired to the operator's services (an environment without
   * `withServices` is kept as is). The server calls this with its configuration, so
   * secrets reach environments from the operator, never from a client's args.
   */
  withServices(services: EnvServices): EnvRegistry {
    const bind = (env: AnyEnvironment): AnyEnvironment => {
      const bound = env.withServices?.(services) ?? env;
      hashAs(bound, env);
      return bound;
    };
    const bound = new EnvRegistry(this.runtime);
    for (const env of this.available.values()) bound.available.set(env.id, bind(env));
    for (const env of this.unavailable.values()) bound.unavailable.set(env.id, bind(env));
    return bound;
  }

  list(): AnyEnvironment[] {
    return [...this.available.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
}

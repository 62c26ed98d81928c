import { Container } from "@cloudflare/containers";
import type { BoxAnswer, BoxObjectRpc, BoxStartRequest } from "../../../envs/sandbox/containers-rpc.js";
import type { ExecOptions, ExecResult } from "../../../envs/sandbox/types.js";
import { boxExec, boxReadFile, boxWriteFile, boxWriteFiles, type BoxFetch } from "./box-server-client.js";

/** The box server's port in every image the Worker builds (box-server/, EDGEGYM_BOX_PORT). */
export const BOX_PORT = 8080;
const RECORD_KEY = "edgegym-box";
/** How long a cold container may take to answer on its port (an image pull on a real deploy is in this too). */
const START_TIMEOUT_MS = 120_000;

/** What the object keeps about its box: enough for any later call, from any isolate, after an eviction. */
interface BoxRecord {
  token: string;
  labels: Record<string, string>;
  defaultUser: string | null;
  workdir: string | null;
  env: Record<string, string>;
  idleSeconds: number;
  startedAtMs: number;
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const lost = (message: string): { ok: false; error: { code: "sandbox_lost"; message: string } } => ({ ok: false, error: { code: "sandbox_lost", message } });

/**
 * One Harbor episode's container on Cloudflare Containers. The object is named by the
 * episode's id, so the episode and its box live and end together: the box starts at the
 * episode's reset, is destroyed when the episode is closed or scored, and destroys itself
 * when no call came for the episode's TTL (`sleepAfter`), so a forgotten episode leaves
 * nothing running. A box that stopped for any other reason is `sandbox_lost`: the object
 * never starts a fresh container under an episode that had one.
 *
 * The build (scripts/worker-harbor.ts) makes one subclass per task image, since a
 * Containers class has exactly one image.
 */
export class HarborBox extends Container<object> implements BoxObjectRpc {
  override defaultPort = BOX_PORT;
  override sleepAfter: string | number = "1h";
  private record: BoxRecord | null = null;

  constructor(ctx: ConstructorParameters<typeof Container<object>>[0], env: object) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.record = (await ctx.storage.get<BoxRecord>(RECORD_KEY)) ?? null;
      if (this.record) this.sleepAfter = `${this.record.idleSeconds}s`;
    });
  }

  private get running(): boolean {
    return this.ctx.container?.running === true;
  }

  /** A call on the box's port, without the base class's auto-start (a stopped box must stay stopped). */
  private readonly call: BoxFetch = async (path, init) => {
    const port = this.ctx.container?.getTcpPort(BOX_PORT);
    if (!port) throw new Error("no container on this object");
    this.renewActivityTimeout();
    // The DOM's and the Workers' fetch types differ only in generics: the call is the same.
    return port.fetch(`http://box${path}`, init as never) as unknown as Promise<Response>;
  };

  /** Runs `work` on a live box; a box that is not running, or stops under the call, is lost. */
  private async onBox<T>(work: (record: BoxRecord) => Promise<BoxAnswer<T>>): Promise<BoxAnswer<T>> {
    const record = this.record;
    if (!record) return lost("this episode has no container (never started, or destroyed)");
    if (!this.running) return lost("the episode's container has stopped; its files are gone");
    try {
      return await work(record);
    } catch (err) {
      if (!this.running) return lost("the episode's container stopped during the call");
      return lost(`the episode's container did not answer: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async boxStart(request: BoxStartRequest): Promise<BoxAnswer<{ startedAtMs: number }>> {
    if (this.record) {
      // A replayed reset of the same episode: the box it started is the answer, if it still runs.
      return this.running ? { ok: true, value: { startedAtMs: this.record.startedAtMs } } : lost("the episode's container has stopped; its files are gone");
    }
    if (request.network.mode === "allowlist") return { ok: false, error: { code: "sandbox_start_failed", message: "allowlist networks are not enforced by Containers" } };
    const record: BoxRecord = {
      token: randomToken(),
      labels: { ...request.labels },
      defaultUser: request.defaultUser,
      workdir: request.workdir,
      env: { ...request.env },
      idleSeconds: Math.max(60, Math.floor(request.idleSeconds)),
      startedAtMs: Date.now(),
    };
    this.sleepAfter = `${record.idleSeconds}s`;
    // Stored before the start: an object evicted mid-start still knows its box had a token (and so is lost, never restarted).
    await this.ctx.storage.put(RECORD_KEY, record);
    this.record = record;
    try {
      await this.startAndWaitForPorts({
        ports: BOX_PORT,
        startOptions: { envVars: { EDGEGYM_BOX_TOKEN: record.token }, enableInternet: request.network.mode === "public", labels: { "edgegym.role": "episode" } },
        cancellationOptions: { portReadyTimeoutMS: START_TIMEOUT_MS, instanceGetTimeoutMS: START_TIMEOUT_MS },
      });
    } catch (err) {
      await this.forget();
      return { ok: false, error: { code: "sandbox_start_failed", message: `the container did not start: ${err instanceof Error ? err.message : String(err)}` } };
    }
    return { ok: true, value: { startedAtMs: record.startedAtMs } };
  }

  boxExec(argv: string[], options: ExecOptions): Promise<BoxAnswer<ExecResult>> {
    return this.onBox((r) => boxExec(this.call, r.token, argv, options, { user: r.defaultUser, workdir: r.workdir, env: r.env }));
  }

  boxReadFile(path: string, maxBytes: number): Promise<BoxAnswer<Uint8Array>> {
    return this.onBox((r) => boxReadFile(this.call, r.token, path, maxBytes));
  }

  boxWriteFile(path: string, data: Uint8Array, options: { mode?: number; user?: string }): Promise<BoxAnswer<null>> {
    return this.onBox((r) => boxWriteFile(this.call, r.token, path, data, options));
  }

  boxWriteFiles(dir: string, files: { relativePath: string; mode: number; bytes: Uint8Array }[]): Promise<BoxAnswer<null>> {
    return this.onBox((r) => boxWriteFiles(this.call, r.token, dir, files));
  }

  async boxDestroy(): Promise<BoxAnswer<null>> {
    await this.forget();
    return { ok: true, value: null };
  }

  async boxInspect(): Promise<{ running: boolean; labels: Record<string, string> } | null> {
    return this.record ? { running: this.running, labels: { ...this.record.labels } } : null;
  }

  /** Idle for the episode's TTL: nobody will call again, so the box goes (stopping would keep its record and a later call would read lost anyway). */
  override async onActivityExpired(): Promise<void> {
    await this.forget();
  }

  /** Kills the container (if it runs) and drops the record, so the object holds nothing. */
  private async forget(): Promise<void> {
    this.record = null;
    if (this.running) await this.ctx.container?.destroy().catch(() => undefined);
    await this.ctx.storage.delete(RECORD_KEY);
  }
}

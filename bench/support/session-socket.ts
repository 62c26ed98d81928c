import WebSocket from "ws";
import { STEP_MESSAGE } from "./http-episodes.js";

/** One /v1/ws socket shared by every episode of a level; each frame's reply is matched by its id. */
export class SessionSocket {
  private next = 0;
  private readonly waiting = new Map<number, (frame: { status: number; body?: unknown; raw: string }) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data: Buffer) => {
      const raw = data.toString("utf8");
      const frame = JSON.parse(raw) as { id: number; status: number; body?: unknown };
      const resolve = this.waiting.get(frame.id);
      this.waiting.delete(frame.id);
      resolve?.({ status: frame.status, body: frame.body, raw });
    });
    ws.on("close", () => {
      for (const resolve of this.waiting.values()) resolve({ status: 0, raw: "" });
      this.waiting.clear();
    });
  }

  static open(url: string): Promise<SessionSocket> {
    const ws = new WebSocket(`${url.replace("http", "ws")}/v1/ws`, { perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new SessionSocket(ws)));
      ws.once("error", reject);
    });
  }

  request(frame: Record<string, unknown>): Promise<{ status: number; body?: unknown; raw: string }> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ id, ...frame }));
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once("close", () => resolve());
      this.ws.close(1000);
    });
  }
}

/** Plays bench-echo episodes on `socket` until `until` (performance.now() ms); calls `record` with each step's latency; returns the errors. */
export async function socketEpisodes(socket: SessionSocket, until: number, record: (ms: number) => void = () => {}): Promise<number> {
  let errors = 0;
  while (performance.now() < until) {
    const reset = await socket.request({ op: "reset", env_id: "bench-echo" });
    if (reset.status !== 201) {
      errors++;
      if (reset.status === 0) return errors;
      continue;
    }
    const id = (reset.body as { episode_id: string }).episode_id;
    let turn = 0;
    let done = false;
    while (!done && performance.now() < until) {
      const t = performance.now();
      const res = await socket.request({ op: "step", episode_id: id, body: { turn, message: STEP_MESSAGE } });
      if (res.status !== 200) {
        errors++;
        break;
      }
      record(performance.now() - t);
      ({ turn, done } = res.body as { turn: number; done: boolean });
    }
  }
  return errors;
}

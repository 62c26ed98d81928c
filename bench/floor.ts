/**
 * `npm run bench:floor`: the least a persisted step can cost on this machine, as a
 * yardstick for `npm run bench`. A bare node:http server (no Hono, zod or drizzle) runs
 * in its own process with better-sqlite3 on a WAL file, set up like the real server;
 * "/step" reads a JSON body, loads the episode row, appends two messages and the reply
 * to it, and writes it back with the same conditional UPDATE … WHERE id AND turn; a
 * twenty-turn episode, like bench-echo. "/health" answers a constant. The load is the
 * same undici client as `npm run bench`, so the two tables compare directly.
 *
 *   BENCH_SECONDS=5 BENCH_LEVELS=1,64 npm run bench:floor
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { ownCpuSeconds, processTreeCpuSeconds } from "./support/process-cpu.js";
import { runWrk, wrkAvailable } from "./support/wrk.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LEVELS = (process.env.BENCH_LEVELS ?? "1,16,64,256").split(",").map(Number);
const TURNS = 20;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** The bare server: runs in the child process. */
function serve(dbPath: string): void {
  const db = new Database(dbPath);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("wal_autocheckpoint = 10000");
  db.exec("create table if not exists episodes (id text primary key, state text not null, messages text not null, replies text not null, turn integer not null, status text not null, expires_at integer not null)");
  const insert = db.prepare("insert into episodes values (?, ?, ?, '[]', 0, 'active', ?)");
  const select = db.prepare("select state, messages, turn, status, expires_at from episodes where id = ?");
  const update = db.prepare("update episodes set state = ?, messages = ?, replies = json_insert(replies, '$[#]', ?), turn = ?, status = ?, expires_at = ? where id = ? and turn = ? and status = 'active' returning id");
  const json = (res: import("node:http").ServerResponse, status: number, body: string) => {
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  const server = createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/health") return json(res, 200, '{"status":"ok"}');
    const body = req.method === "POST" ? await readBody(req) : "";
    if (req.url === "/reset") {
      const id = `ep_${randomUUID().replaceAll("-", "")}`;
      insert.run(id, JSON.stringify({ words: 0 }), JSON.stringify([{ role: "user", content: "Write 5 words per turn." }]), Date.now() + 3_600_000);
      return json(res, 201, JSON.stringify({ episode_id: id }));
    }
    const match = /^\/step\/([\w]+)$/.exec(req.url ?? "");
    if (!match) return json(res, 404, "{}");
    const { turn, message } = JSON.parse(body) as { turn: number; message: { role: string; content: string } };
    const row = select.get(match[1]) as { state: string; messages: string; turn: number; status: string } | undefined;
    if (!row || row.turn !== turn || row.status !== "active") return json(res, 409, "{}");
    const state = JSON.parse(row.state) as { words: number };
    const messages = JSON.parse(row.messages) as unknown[];
    const words = message.content.split(/\s+/).length;
    const reply = [{ role: "user", content: `turn ${turn + 1}: ${words} words` }];
    messages.push(message, ...reply);
    const done = turn + 1 >= TURNS;
    const expiresAt = Date.now() + 3_600_000;
    const text = JSON.stringify({ episode_id: match[1], turn: turn + 1, messages: reply, done, stop_reason: done ? "max_turns" : null, truncated: done, expires_at: new Date(expiresAt).toISOString() });
    const won = update.all(JSON.stringify({ words: state.words + words }), JSON.stringify(messages), text, turn + 1, done ? "done" : "active", expiresAt, match[1], turn);
    return won.length === 1 ? json(res, 200, text) : json(res, 409, "{}");
  });
  server.listen(Number(process.env.FLOOR_PORT ?? 0), "127.0.0.1", () => {
    const address = server.address();
    console.log(`listening ${typeof address === "object" && address ? address.port : ""}`);
  });
  process.once("SIGTERM", () => server.close(() => process.exit(0)));
}

async function load(url: string, concurrency: number, pid: number, mode: "health" | "steps") {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
    const res = await pool.request({ method, path, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.statusCode, text: await res.body.text() };
  };
  let count = 0;
  const server0 = processTreeCpuSeconds(pid);
  const client0 = ownCpuSeconds();
  const start = performance.now();
  const until = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        if (mode === "health") {
          if ((await call("GET", "/health")).status === 200) count++;
          continue;
        }
        const id = (JSON.parse((await call("POST", "/reset", {})).text) as { episode_id: string }).episode_id;
        for (let turn = 0; turn < TURNS && performance.now() < until; turn++) {
          const res = await call("POST", `/step/${id}`, { turn, message: { role: "assistant", content: "one two three four five" } });
          if (res.status !== 200) throw new Error(`step answered ${res.status}`);
          count++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const serverCpu = (processTreeCpuSeconds(pid) ?? Number.NaN) - (server0 ?? Number.NaN);
  await pool.close();
  return { perSecond: count / elapsed, serverUs: (1e6 * serverCpu) / count, serverBusy: serverCpu / elapsed, clientBusy: (ownCpuSeconds() - client0) / elapsed };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-floor-"));
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--serve", join(dir, "floor.db")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const pid = child.pid as number;
  const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 0) : "-");
  const pct = (n: number) => (Number.isFinite(n) ? `${(100 * n).toFixed(0)}%` : "-");
  const rows: string[] = [];
  try {
    await load(url, 16, pid, "steps"); // warm-up
    for (const concurrency of LEVELS) {
      const health = await load(url, concurrency, pid, "health");
      const wrk = wrkAvailable() ? runWrk(`${url}/health`, concurrency, SECONDS) : null;
      const steps = await load(url, concurrency, pid, "steps");
      rows.push(
        `| ${concurrency} | ${fmt(health.perSecond)} (${fmt(health.serverUs)} µs; ${pct(health.serverBusy)} / ${pct(health.clientBusy)}) | ${wrk ? fmt(wrk.perSecond) : "-"} | ${fmt(steps.perSecond)} (${fmt(steps.serverUs)} µs; ${pct(steps.serverBusy)} / ${pct(steps.clientBusy)}) | ${((100 * steps.perSecond) / health.perSecond).toFixed(0)}% | ${wrk ? `${((100 * steps.perSecond) / wrk.perSecond).toFixed(0)}%` : "-"} |`,
      );
      console.error(`concurrency ${concurrency}: health ${fmt(health.perSecond)}/s, steps ${fmt(steps.perSecond)}/s`);
    }
  } finally {
    child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nBare node:http + better-sqlite3 (no framework), ${SECONDS} s per level; in brackets: server CPU per request, server / load generator busy.\n`);
  console.log("| concurrent episodes | /health req/s | /health with wrk | persisted steps/s | steps ÷ health | steps ÷ wrk /health |");
  console.log("|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
}

if (process.argv[2] === "--serve") serve(process.argv[3] as string);
else await main();

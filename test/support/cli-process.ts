import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or 128 + signal number). */
  exit: Promise<number>;
  /** Resolves when stderr has matched `pattern` `times` times. */
  waitForStderr(pattern: RegExp, times?: number, timeoutMs?: number): Promise<void>;
  /** Resolves with the first match of `pattern` in stdout. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

const SIGNALS: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/**
 * Runs `edgegym …` from source (node + tsx), as a user would run the built CLI: a real
 * process, with real signals and exit codes.
 */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): CliRun {
  const child = spawn(process.execPath, ["--import", "tsx", resolve("src/server/node/cli.ts"), ...args], {
    env: { ...process.env, ...env, FORCE_COLOR: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const waiters: (() => void)[] = [];
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
    for (const w of [...waiters]) w();
  });
  child.stderr?.on("data", (c: Buffer) => {
    err += c.toString();
    for (const w of [...waiters]) w();
  });
  const exit = new Promise<number>((done) => child.on("exit", (code, signal) => done(code ?? 128 + (SIGNALS[signal ?? ""] ?? 0))));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitForStderr: (pattern, times = 1, timeoutMs = 30_000) =>
      new Promise<void>((done, fail) => {
        const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
        const check = (): void => {
          if ((err.match(global)?.length ?? 0) >= times) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(timer);
            done();
          }
        };
        const timer = setTimeout(() => fail(new Error(`stderr never matched ${pattern} ×${times}:\n${err}`)), timeoutMs);
        waiters.push(check);
        check();
      }),
    waitForStdout: (pattern, timeoutMs = 30_000) =>
      new Promise<RegExpMatchArray>((done, fail) => {
        const check = (): void => {
          const match = out.match(pattern);
          if (match) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(timer);
            done(match);
          }
        };
        const timer = setTimeout(() => fail(new Error(`stdout never matched ${pattern}:\n${out}\n${err}`)), timeoutMs);
        waiters.push(check);
        check();
      }),
  };
}

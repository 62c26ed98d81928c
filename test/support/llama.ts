import { spawn } from "node:child_process";
import { resolve } from "node:path";

export interface LlamaServer {
  /** OpenAI-compatible base URL, ending in /v1. */
  baseUrl: string;
  stop(): void;
}

/**
 * Starts test/llama-server (llama.cpp through node-llama-cpp, installed by
 * scripts/fetch-test-model.sh) on a free port of 127.0.0.1 and waits for the model to load.
 * One thread: the machines have two cores, and llama.cpp's default thread count makes
 * every token wait on the other processes.
 */
export function startLlamaServer(modelPath: string, timeoutMs = 60_000): Promise<LlamaServer> {
  const child = spawn(process.execPath, ["--import", "tsx", resolve("test/llama-server/server.ts"), "--model", modelPath, "--port", "0", "--threads", "1"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise<LlamaServer>((done, fail) => {
    let text = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`llama server did not start in ${timeoutMs} ms:\n${text}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        done({ baseUrl: match[1] as string, stop: () => child.kill("SIGTERM") });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`llama server exited (${code}):\n${text}`));
    });
  });
}

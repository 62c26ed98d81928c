import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { FrameDemuxer, type OutputStream } from "./docker-frames.node.js";
import { OutputCollector } from "./exec-output.node.js";
import { HeaderParser, killArgv, TrailerFilter, trailerMarker, wrapperArgv } from "./exec-wrapper.node.js";

/*
 * The exec protocol's pieces without Docker: the frame demuxer, header and trailer parsing,
 * the output cap, and the wrapper and kill scripts run by this machine's /bin/sh.
 */

function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

/** Feeds `bytes` in pieces of `size`. */
function inPieces(bytes: Buffer, size: number, push: (piece: Buffer) => void): void {
  for (let at = 0; at < bytes.length; at += size) push(bytes.subarray(at, at + size));
}

describe("FrameDemuxer", () => {
  it("splits frames however the connection cuts them", () => {
    const wire = Buffer.concat([frame(1, "out "), frame(2, "err "), frame(1, ""), frame(1, "more")]);
    for (const size of [1, 3, 7, 8, 9, wire.length]) {
      const seen: string[] = [];
      const demux = new FrameDemuxer((stream: OutputStream, bytes) => seen.push(`${stream}:${bytes.toString()}`));
      inPieces(wire, size, (piece) => demux.push(piece));
      const joined = seen.reduce<string[]>((acc, item) => {
        const [stream, text] = [item.slice(0, item.indexOf(":")), item.slice(item.indexOf(":") + 1)];
        const last = acc.at(-1);
        if (last?.startsWith(`${stream}:`)) acc[acc.length - 1] = last + text;
        else if (text) acc.push(`${stream}:${text}`);
        return acc;
      }, []);
      expect(joined).toEqual(["stdout:out ", "stderr:err ", "stdout:more"]);
    }
  });
});

describe("HeaderParser", () => {
  it("takes the header off stdout, split or whole", () => {
    const parser = new HeaderParser();
    expect(parser.push(Buffer.from("12"))).toHaveLength(0);
    expect(parser.push(Buffer.from("3 7\nhello")).toString()).toBe("hello");
    expect(parser).toMatchObject({ pid: 123, oomCount: 7 });
    expect(parser.push(Buffer.from(" again")).toString()).toBe(" again");
  });

  it("passes through a stream that does not start with a header (the runtime's own error)", () => {
    const parser = new HeaderParser();
    expect(parser.push(Buffer.from("OCI runtime exec failed: no such file\n")).toString()).toBe("OCI runtime exec failed: no such file\n");
    expect(parser.pid).toBeNull();
    const short = new HeaderParser();
    expect(short.push(Buffer.from("x"))).toHaveLength(0);
    expect(short.end().toString()).toBe("x");
  });

  it("reads an unknown count as null", () => {
    const parser = new HeaderParser();
    parser.push(Buffer.from("9 -\n"));
    expect(parser).toMatchObject({ pid: 9, oomCount: null });
  });
});

describe("TrailerFilter", () => {
  const marker = trailerMarker("00ff00ff00ff00ff00ff00ff");

  it("cuts the trailer out however it is split, and keeps everything else in order", () => {
    const wire = Buffer.from(`before\u001b[1mbold\u001b[0m${marker}3\nafter`);
    for (const size of [1, 2, 5, 11, wire.length]) {
      const filter = new TrailerFilter(marker);
      const out: Buffer[] = [];
      inPieces(wire, size, (piece) => out.push(filter.push(piece)));
      out.push(filter.end());
      expect(Buffer.concat(out).toString()).toBe("before\u001b[1mbold\u001b[0mafter");
      expect(filter).toMatchObject({ seen: true, oomCount: 3 });
    }
  });

  it("keeps the highest count, and passes bytes that only look like a trailer", () => {
    const filter = new TrailerFilter(marker);
    const out = filter.push(Buffer.from(`${marker}5\n${marker}2\n${marker}nope\n`));
    expect(Buffer.concat([out, filter.end()]).toString()).toBe(`${marker}nope\n`);
    expect(filter.oomCount).toBe(5);
  });

  it("releases a held tail at the end", () => {
    const filter = new TrailerFilter(marker);
    expect(filter.push(Buffer.from(`tail${marker.slice(0, 6)}`)).toString()).toBe("tail");
    expect(filter.end().toString()).toBe(marker.slice(0, 6));
    expect(filter.seen).toBe(false);
  });
});

describe("OutputCollector", () => {
  it("keeps the first maxBytes, counts all, replaces a character cut at the cap", () => {
    const out = new OutputCollector(5);
    out.add(Buffer.from("abcd"));
    out.add(Buffer.from("é and more"));
    expect(out.result()).toEqual({ output: "abcd\uFFFD", outputBytes: 15, truncated: true });
  });
});

const hasSh = existsSync("/bin/sh") && existsSync("/proc/self/stat");

describe.skipIf(!hasSh)("the wrapper and kill scripts under this machine's /bin/sh", () => {
  it("prints the header first, runs argv as an executable, and the trailer last with its exit code", () => {
    const marker = trailerMarker("abcdef");
    const [command, ...args] = wrapperArgv(marker, ["sh", "-c", 'echo "out $1"; echo err >&2; exit 5', "x", "a b"]);
    const run = spawnSync(command!, args, { encoding: "utf8" });
    expect(run.status).toBe(5);
    expect(run.stdout).toMatch(/^\d+ (\d+|-)\nout a b\n$/);
    expect(run.stderr.startsWith(`err\n${marker}`)).toBe(true);
    expect(run.stderr.slice(`err\n${marker}`.length)).toMatch(/^(\d+|-)\n$/);
    const builtin = spawnSync(command!, wrapperArgv(marker, ["exit", "3"]).slice(1), { encoding: "utf8" });
    expect(builtin.status).toBe(127);
  });

  it("kills a session's whole tree, also a process group made by job control", async () => {
    const [command, ...args] = wrapperArgv(trailerMarker("k"), ["sh", "-c", "sleep 60 & (sleep 61 &) ; sh -c 'set -m; sleep 62 & wait' & wait"]);
    // detached: a session leader, as runc makes every exec.
    const child = spawn(command!, args, { detached: true, stdio: ["ignore", "pipe", "ignore"] });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ? null : code)));
    const sid = child.pid!;
    await sleep(300);
    const members = (): number[] =>
      spawnSync("sh", ["-c", "ls /proc | grep -E '^[0-9]+$'"], { encoding: "utf8" })
        .stdout.split("\n")
        .filter(Boolean)
        .filter((pid) => {
          try {
            const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
            return fields[3] === String(sid) && fields[0] !== "Z";
          } catch {
            return false;
          }
        })
        .map(Number);
    expect(members().length).toBeGreaterThanOrEqual(4);
    const [kill, ...killArgs] = killArgv(sid);
    expect(spawnSync(kill!, killArgs).status).toBe(0);
    expect(await exited).toBeNull();
    await sleep(100);
    expect(members()).toEqual([]);
  });
});

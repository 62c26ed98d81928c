/**
 * The small POSIX-sh protocol every sandbox exec runs under, so that a time limit can kill the
 * command's whole process tree and an OOM kill inside the command is seen, with one exec per
 * command and nothing but /bin/sh needed in the image (dash, bash or busybox).
 *
 * - Header: before the command starts, the wrapper prints `<pid> <oom_kill count>\n` as the
 *   first bytes of stdout. Nothing of the command can come before it, so it cannot be forged.
 *   The pid is the exec's session id: runc makes every exec'd process a session leader
 *   (checked: pid = pgid = sid), and every descendant keeps that session unless it calls
 *   setsid itself (a deliberate daemon), also through shell job control, which only changes
 *   the process group.
 * - The command runs as a child, `( exec "$@" )`: an executable looked up on PATH as
 *   `docker exec` would (never a shell builtin or the wrapper's own function).
 * - Trailer: after the command exits, the wrapper reads the count again and prints
 *   `<marker><count>\n` to stderr, marker = ESC "edgegym-" + a random nonce + ":". The
 *   provider cuts it out of the output. Forging a trailer gains a command nothing: the
 *   provider takes the highest count seen, and a command can cause a real OOM anyway.
 * - The count is `oom_kill` of the container's memory cgroup (cgroup v1
 *   memory.oom_control, v2 memory.events), readable by any user in the container. Docker's
 *   own `State.OOMKilled` is only set when the container's main process exits (checked on
 *   20.10: false after an exec was OOM-killed), so it cannot say anything about an exec.
 *
 * On a time limit the provider runs `killArgv(pid)` as root in a second exec: SIGKILL to the
 * process group, then to every process whose group or session is `pid`, three rounds (a
 * forking loop may add processes while the first round runs).
 */

/** Reads the cgroup's oom_kill counter into `o` ("-" where the kernel offers none). */
const COUNT_FUNCTION =
  'c() { o=-; for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do if [ -r "$f" ]; then while read -r k v; do if [ "$k" = oom_kill ]; then o=$v; fi; done < "$f"; return 0; fi; done; }';

const WRAPPER_SCRIPT = [
  COUNT_FUNCTION,
  'm=$1; shift',
  'c; printf \'%s %s\\n\' "$$" "$o"',
  '( exec "$@" )',
  "r=$?",
  'c; printf \'%s%s\\n\' "$m" "$o" >&2',
  'exit "$r"',
].join("\n");

const KILL_SCRIPT = [
  "p=$1",
  "for i in 1 2 3; do",
  '  kill -KILL -"$p" 2>/dev/null',
  "  n=0",
  "  for d in /proc/[0-9]*; do",
  '    read -r s < "$d/stat" 2>/dev/null || continue',
  // Fields after the command name, which may hold spaces and ")": state ppid pgrp session …
  '    s=${s##*) }',
  "    set -- $s",
  '    if [ "$3" = "$p" ] || [ "$4" = "$p" ]; then kill -KILL "${d#/proc/}" 2>/dev/null && n=$((n + 1)); fi',
  "  done",
  '  if [ "$n" = 0 ]; then break; fi',
  "done",
  "exit 0",
].join("\n");

const COUNT_SCRIPT = `${COUNT_FUNCTION}\nc; printf '%s\\n' "$o"`;

/** A fresh trailer marker (one per exec). */
export function trailerMarker(nonce: string): string {
  return `\u001bedgegym-${nonce}:`;
}

/** The argv docker runs for `argv`. */
export function wrapperArgv(marker: string, argv: readonly string[]): string[] {
  return ["/bin/sh", "-c", WRAPPER_SCRIPT, "edgegym-exec", marker, ...argv];
}

/** Kills the session and process group `pid` (run as root). */
export function killArgv(pid: number): string[] {
  return ["/bin/sh", "-c", KILL_SCRIPT, "edgegym-kill", String(pid)];
}

/** Prints the container's oom_kill count, or "-". */
export function oomCountArgv(): string[] {
  return ["/bin/sh", "-c", COUNT_SCRIPT, "edgegym-oom-count"];
}

/** "-" or a count; anything else is not a count. */
export function parseCount(text: string): number | null {
  return /^\d+$/.test(text) ? Number(text) : null;
}

const HEADER_MAX = 64;

/**
 * Takes the header off the front of stdout. Bytes are held until its newline; a stream
 * that does not start with a header (the wrapper never ran: the runtime's own error text)
 * is passed through whole.
 */
export class HeaderParser {
  /** The command's session id, once the header arrived. */
  pid: number | null = null;
  /** oom_kill before the command; null when unknown. */
  oomCount: number | null = null;
  private pending: Buffer | null = Buffer.alloc(0);

  /** Returns the bytes that are output. */
  push(bytes: Buffer): Buffer {
    if (this.pending === null) return bytes;
    const buf = Buffer.concat([this.pending, bytes]);
    const newline = buf.indexOf(0x0a);
    if (newline < 0 && buf.length < HEADER_MAX) {
      this.pending = buf;
      return Buffer.alloc(0);
    }
    this.pending = null;
    const match = newline < 0 ? null : /^(\d+) (\d+|-)$/.exec(buf.subarray(0, newline).toString("latin1"));
    if (!match) return buf;
    this.pid = Number(match[1]);
    this.oomCount = parseCount(match[2] ?? "");
    return buf.subarray(newline + 1);
  }

  /** Whatever was held when the stream ended. */
  end(): Buffer {
    const rest = this.pending ?? Buffer.alloc(0);
    this.pending = null;
    return rest;
  }
}

const TRAILER_VALUE_MAX = 24;

/** Cuts trailers out of stderr; `oomCount` is the highest count any of them carried. */
export class TrailerFilter {
  oomCount: number | null = null;
  /** A trailer arrived: the wrapper saw the command exit. */
  seen = false;
  private readonly marker: Buffer;
  private pending = Buffer.alloc(0);

  constructor(marker: string) {
    this.marker = Buffer.from(marker, "utf8");
  }

  /** Returns the bytes that are output; a tail that may be a trailer's start is held back. */
  push(bytes: Buffer): Buffer {
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, bytes]) : bytes;
    const out: Buffer[] = [];
    for (;;) {
      const at = buf.indexOf(this.marker);
      if (at < 0) break;
      const valueStart = at + this.marker.length;
      const newline = buf.indexOf(0x0a, valueStart);
      if (newline < 0 && buf.length - valueStart <= TRAILER_VALUE_MAX) {
        out.push(buf.subarray(0, at));
        this.pending = Buffer.from(buf.subarray(at));
        return Buffer.concat(out);
      }
      const value = newline < 0 ? "" : buf.subarray(valueStart, newline).toString("latin1");
      if (newline < 0 || !/^(\d+|-)$/.test(value)) {
        // The marker's bytes without a trailer's shape: output like any other.
        out.push(buf.subarray(0, at + 1));
        buf = buf.subarray(at + 1);
        continue;
      }
      this.seen = true;
      const count = parseCount(value);
      if (count !== null) this.oomCount = Math.max(this.oomCount ?? 0, count);
      out.push(buf.subarray(0, at));
      buf = buf.subarray(newline + 1);
    }
    const keep = this.partialMarkerAtEnd(buf);
    out.push(buf.subarray(0, buf.length - keep));
    this.pending = Buffer.from(buf.subarray(buf.length - keep));
    return Buffer.concat(out);
  }

  end(): Buffer {
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    return rest;
  }

  /** Length of the longest end of `buf` that is a start of the marker. */
  private partialMarkerAtEnd(buf: Buffer): number {
    const first = this.marker[0] ?? 0;
    for (let at = buf.indexOf(first, Math.max(0, buf.length - this.marker.length + 1)); at >= 0; at = buf.indexOf(first, at + 1)) {
      if (buf.subarray(at).equals(this.marker.subarray(0, buf.length - at))) return buf.length - at;
    }
    return 0;
  }
}

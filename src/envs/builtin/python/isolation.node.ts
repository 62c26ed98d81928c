import { spawnSync } from "node:child_process";
import { existsSync, lstatSync } from "node:fs";
import { dirname } from "node:path";

/**
 * How Python jobs are kept apart from the server, as detected at start (by trying it):
 *
 * - `namespaced`: each job is its own process inside bubblewrap (new user, pid, network, ipc,
 *   uts and cgroup namespaces; a read-only filesystem holding only /usr, Node and Pyodide;
 *   all capabilities dropped; killed with its parent), under Node's permission model, with an
 *   empty environment and kernel limits on memory and CPU time. It has no network, sees no
 *   other process, and its files are only what is listed above.
 * - `process`: the same process, permission model, environment and limits, but in the server's
 *   own namespaces: it shares the host's network and could signal processes of the same user
 *   if it ever got past the permission model. Weak: served only when the operator opts in.
 */
export type IsolationLevel = "namespaced" | "process";

export interface IsolationReport {
  level: IsolationLevel;
  /** Why this level (e.g. why bubblewrap could not be used). */
  detail: string;
  /** Data-segment limit (RLIMIT_DATA) of each interpreter process, MiB; wasm memory counts. Null when prlimit is missing. */
  memoryLimitMb: number | null;
  /** CPU-time limit (RLIMIT_CPU) of each interpreter process, seconds. Null when prlimit is missing. */
  cpuLimitSeconds: number | null;
}

export interface LaunchPlan {
  report: IsolationReport;
  /** The executable and arguments that start `childScript` with `childArgs`. */
  command: (childArgs: string[]) => { file: string; args: string[] };
  /** The same launch with Node given `nodeArgs` alone (no permission model): tests probe the namespaces with it. */
  bare: (nodeArgs: string[]) => { file: string; args: string[] };
}

export interface IsolationOptions {
  memoryLimitMb: number;
  cpuLimitSeconds: number;
  /** The script each interpreter process runs, and the Pyodide folder it may read. */
  childScript: string;
  pyodideDir: string;
  /** Test seam: leave code generation from strings on, to show the layers under it hold. */
  allowCodeGeneration?: boolean;
  /** Skip bubblewrap even where it works (tests of the weak level). */
  forbidNamespaces?: boolean;
}

/** An executable in the usual system folders (not the server's PATH: that is the operator's environment). */
function findExecutable(name: string): string | undefined {
  return ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"].map((d) => `${d}/${name}`).find((p) => existsSync(p));
}

/** Read-only binds for the system folders Node needs (its shared libraries), keeping merged-/usr symlinks as links. */
function systemBinds(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const path of ["/lib", "/lib64", "/lib32", "/bin"]) {
    if (!existsSync(path)) continue;
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) args.push("--symlink", `usr${path}`, path);
    else args.push("--ro-bind", path, path);
  }
  return args;
}

function nodeArgs(options: IsolationOptions): string[] {
  return [
    "--permission",
    `--allow-fs-read=${options.pyodideDir}`,
    `--allow-fs-read=${options.childScript}`,
    ...(options.allowCodeGeneration ? [] : ["--disallow-code-generation-from-strings"]),
    // Node's own heap; Pyodide's memory is wasm, bounded by RLIMIT_DATA below.
    "--max-old-space-size=256",
    options.childScript,
  ];
}

function bwrapArgs(options: IsolationOptions): string[] {
  const node = process.execPath;
  const nodeDir = dirname(node);
  return [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
    "--cap-drop",
    "ALL",
    "--uid",
    "65534",
    "--gid",
    "65534",
    ...systemBinds(),
    ...(nodeDir.startsWith("/usr/") ? [] : ["--ro-bind", nodeDir, nodeDir]),
    "--ro-bind",
    options.pyodideDir,
    options.pyodideDir,
    "--ro-bind",
    options.childScript,
    options.childScript,
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--chdir",
    "/",
    "--",
    node,
  ];
}

/** Runs `node -e` inside bubblewrap as a job would: it must start, be pid 2 and see no network interface but loopback. */
function bubblewrapWorks(bwrap: string, options: IsolationOptions): string | undefined {
  const probe = "process.stdout.write(JSON.stringify({pid:process.pid,nets:Object.keys(require('os').networkInterfaces())}))";
  const args = bwrapArgs(options);
  const result = spawnSync(bwrap, [...args, "-e", probe], { env: {}, encoding: "utf8", timeout: 15_000 });
  if (result.status !== 0) return `bubblewrap failed: ${(result.stderr || result.error?.message || `exit ${result.status}`).trim().split("\n")[0]}`;
  try {
    const seen = JSON.parse(result.stdout) as { pid: number; nets: string[] };
    if (seen.pid > 2) return `bubblewrap started but gave no pid namespace (pid ${seen.pid})`;
    if (seen.nets.some((n) => n !== "lo")) return `bubblewrap started but the network is shared (${seen.nets.join(", ")})`;
    return undefined;
  } catch {
    return `bubblewrap probe printed ${JSON.stringify(result.stdout.slice(0, 200))}`;
  }
}

/** Detects the strongest isolation this host allows and how to start an interpreter process under it. */
export function planIsolation(options: IsolationOptions): LaunchPlan {
  const prlimit = findExecutable("prlimit");
  const limits = prlimit
    ? [prlimit, `--data=${options.memoryLimitMb * 1024 * 1024}`, `--cpu=${options.cpuLimitSeconds}`, "--core=0", "--"]
    : [];
  const withLimits = (file: string, args: string[]): { file: string; args: string[] } =>
    limits.length > 0 ? { file: limits[0] as string, args: [...limits.slice(1), file, ...args] } : { file, args };
  const limitReport = { memoryLimitMb: prlimit ? options.memoryLimitMb : null, cpuLimitSeconds: prlimit ? options.cpuLimitSeconds : null };

  const bwrap = findExecutable("bwrap");
  const why = options.forbidNamespaces ? "namespaces turned off for this sandbox" : !bwrap ? "bubblewrap (bwrap) is not installed" : bubblewrapWorks(bwrap, options);
  if (bwrap && why === undefined) {
    const prefix = bwrapArgs(options);
    return {
      report: { level: "namespaced", detail: "bubblewrap namespaces (user, pid, network, ipc, uts, cgroup), Node permission model, empty environment" + (prlimit ? ", memory and CPU rlimits" : ", no rlimits (prlimit missing)"), ...limitReport },
      command: (childArgs) => withLimits(bwrap, [...prefix, ...nodeArgs(options), ...childArgs]),
      bare: (args) => withLimits(bwrap, [...prefix, ...args]),
    };
  }
  return {
    report: { level: "process", detail: `separate process under Node's permission model with an empty environment, sharing the host's network and process namespaces: ${why}`, ...limitReport },
    command: (childArgs) => withLimits(process.execPath, [...nodeArgs(options), ...childArgs]),
    bare: (args) => withLimits(process.execPath, args),
  };
}

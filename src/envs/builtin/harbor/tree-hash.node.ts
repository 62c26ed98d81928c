/**
 * Reading a task's directories (environment/, tests/, solution/) safely and hashing them.
 *
 * A task directory comes from outside (a dataset download, a contributor's pull request),
 * so reading it must never reach past it: nothing here follows a symlink. Files are opened
 * with O_NOFOLLOW; a symlink is hashed as its target's text (Docker's build context sends
 * links as links) and only when that target stays inside the tree, and where files are
 * returned to be copied into a box (tests/, solution/) a symlink is refused outright.
 * FIFOs, sockets and devices are refused (reading a FIFO would hang the loader). Every walk
 * is bounded in files and bytes, checked before anything large is read.
 */
import { createHash, type Hash } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readdir, readlink } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ContentHash } from "../../content-hash.js";
import { HarborTaskError } from "./errors.js";

/** A file to copy into the box: path under its tree (with `/`), permission bits, content. */
export interface TaskFile {
  relativePath: string;
  /** Permission bits (`0o755`), so test.sh and solve.sh stay executable. */
  mode: number;
  bytes: Uint8Array;
}

export interface TreeLimits {
  /** Entries: files, directories and links. */
  maxFiles: number;
  /** Bytes of all files together. */
  maxBytes: number;
}

type Entry =
  | { kind: "dir"; path: string }
  | { kind: "file"; path: string; mode: number; size: number }
  | { kind: "symlink"; path: string; target: string };

const CHUNK = 1 << 20;

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** Every entry under `root`, sorted by path; `label` ("tests/") names the tree in errors. */
async function listTree(root: string, label: string, limits: TreeLimits, allowSymlinks: boolean): Promise<Entry[]> {
  const entries: Entry[] = [];
  let bytes = 0;
  const pending = [""];
  while (pending.length) {
    const rel = pending.pop() as string;
    for (const dirent of await readdir(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${dirent.name}` : dirent.name;
      const abs = join(root, path);
      const stat = await lstat(abs);
      if (stat.isSymbolicLink()) {
        const target = await readlink(abs);
        if (!allowSymlinks) throw new HarborTaskError(`${label}${path} is a symlink; ${label} must hold plain files only`, `${label}${path}`);
        if (!inside(root, resolve(dirname(abs), target))) {
          throw new HarborTaskError(`${label}${path} is a symlink to "${target}", outside ${label}: refused (a task may not reach files outside its directory)`, `${label}${path}`);
        }
        entries.push({ kind: "symlink", path, target });
      } else if (stat.isDirectory()) {
        entries.push({ kind: "dir", path });
        pending.push(path);
      } else if (stat.isFile()) {
        bytes += stat.size;
        entries.push({ kind: "file", path, mode: stat.mode & 0o777, size: stat.size });
      } else {
        throw new HarborTaskError(`${label}${path} is not a regular file, directory or symlink (a FIFO, socket or device): refused`, `${label}${path}`);
      }
      // Directories and links count too: a million empty directories is no smaller a walk.
      if (entries.length > limits.maxFiles) throw new HarborTaskError(`${label} holds more than ${limits.maxFiles} files and directories: too large to serve`, label);
      if (bytes > limits.maxBytes) throw new HarborTaskError(`${label} holds more than ${limits.maxBytes} bytes: too large to serve`, label);
    }
  }
  // Code-unit order: the same on every machine and locale.
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * A regular file's bytes, opened without following a symlink, refused past `maxBytes`.
 * `label` names it in errors.
 */
export async function readPlainFile(path: string, label: string, maxBytes: number): Promise<Uint8Array> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new HarborTaskError(`${label} is a symlink: refused (a task may not reach files outside its directory)`, label);
    if (code === "ENOENT") throw new HarborTaskError(`${label} is missing`, label);
    throw new HarborTaskError(`${label} cannot be read: ${(err as Error).message}`, label);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new HarborTaskError(`${label} is not a regular file`, label);
    if (stat.size > maxBytes) throw new HarborTaskError(`${label} is ${stat.size} bytes, more than ${maxBytes}`, label);
    const bytes = new Uint8Array(stat.size);
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesRead } = await handle.read(bytes, offset, bytes.length - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return offset === bytes.length ? bytes : bytes.subarray(0, offset);
  } finally {
    await handle.close();
  }
}

/**
 * Streams a file of the listed `size` into the hash without holding it whole (environment/
 * may be a large repository); a file that changed size since the listing is an error.
 */
async function hashFile(hash: Hash, path: string, size: number, label: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => {
    throw new HarborTaskError(`${label} changed while it was read`, label);
  });
  try {
    const buffer = new Uint8Array(Math.min(CHUNK, Math.max(size, 1)));
    let left = size;
    while (left > 0) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, left), null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      left -= bytesRead;
    }
    const { bytesRead: extra } = await handle.read(buffer, 0, 1, null);
    if (left !== 0 || extra !== 0) throw new HarborTaskError(`${label} changed while it was read`, label);
  } finally {
    await handle.close();
  }
}

/** The hash's framing: each entry's kind, JSON-quoted path and (for files) exec bit and size, then the content. */
function header(entry: Entry): string {
  const path = JSON.stringify(entry.path);
  if (entry.kind === "dir") return `d ${path}\n`;
  if (entry.kind === "symlink") return `l ${path} ${JSON.stringify(entry.target)}\n`;
  // Only the exec bit: umask differences (644 vs 664) change no build and must not bust the cache.
  return `f ${path} ${entry.mode & 0o111 ? "x" : "-"} ${entry.size}\n`;
}

const digest = (hash: Hash): ContentHash => `sha256:${hash.digest("hex")}`;
const FORMAT = "edgegym-harbor-tree/1\n";

/**
 * `sha256:<hex>` over `root`'s sorted relative paths, kinds, exec bits and bytes: the
 * Docker image cache key of a task's environment/ (same content, same key, on any machine).
 * Symlinks inside the tree are hashed as links; one pointing outside it is refused.
 */
export async function hashTree(root: string, label: string, limits: TreeLimits): Promise<ContentHash> {
  const hash = createHash("sha256").update(FORMAT);
  for (const entry of await listTree(root, label, limits, true)) {
    hash.update(header(entry));
    if (entry.kind === "file") await hashFile(hash, join(root, entry.path), entry.size, `${label}${entry.path}`);
  }
  return digest(hash);
}

/**
 * The plain files under `root` (no symlinks at all: they are copied into a box) with the
 * same hash `hashTree` would give.
 */
export async function readTree(root: string, label: string, limits: TreeLimits): Promise<{ files: TaskFile[]; hash: ContentHash }> {
  const hash = createHash("sha256").update(FORMAT);
  const files: TaskFile[] = [];
  for (const entry of await listTree(root, label, limits, false)) {
    hash.update(header(entry));
    if (entry.kind !== "file") continue;
    const bytes = await readPlainFile(join(root, entry.path), `${label}${entry.path}`, limits.maxBytes);
    if (bytes.byteLength !== entry.size) throw new HarborTaskError(`${label}${entry.path} changed while it was read`, `${label}${entry.path}`);
    hash.update(bytes);
    files.push({ relativePath: entry.path, mode: entry.mode, bytes });
  }
  return { files, hash: digest(hash) };
}

import { createReadStream } from "node:fs";
import { lstat, readdir, readlink } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { Readable } from "node:stream";
import tar from "tar-stream";

/** A tar-stream (streamx) writable: an extract, or a pack's entry. */
type TarWritable = ReturnType<typeof tar.extract> | ReturnType<ReturnType<typeof tar.pack>["entry"]>;

/**
 * The tar archives the Engine speaks for files: a build context packed from a directory, one
 * file packed for `PUT /archive`, one file read out of `GET /archive` with its size checked
 * from the tar header before any of its bytes are read.
 */

/**
 * The directory as a build context, streamed (files are read as the daemon takes them).
 * Regular files, directories and symlinks, owned by root as Docker's own client sends them;
 * sockets and other special files are left out. `.dockerignore` is not applied.
 *
 * @example await engine.stream("POST", "/build", { raw: { body: packDirectory(dir), contentType: "application/x-tar" } })
 */
export function packDirectory(dir: string): Readable {
  const pack = tar.pack();
  const add = async (path: string): Promise<void> => {
    for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (pack.destroying) throw new Error("the build context's reader went away");
      const full = join(path, entry.name);
      const name = relative(dir, full).split(sep).join("/");
      const stat = await lstat(full);
      const common = { name, mode: stat.mode & 0o7777, mtime: stat.mtime, uid: 0, gid: 0 };
      if (stat.isDirectory()) {
        pack.entry({ ...common, type: "directory" });
        await add(full);
      } else if (stat.isSymbolicLink()) {
        pack.entry({ ...common, type: "symlink", linkname: await readlink(full) });
      } else if (stat.isFile()) {
        await copyInto(pack.entry({ ...common, type: "file", size: stat.size }), createReadStream(full));
      }
    }
  };
  add(dir).then(
    () => {
      if (!pack.destroying) pack.finalize();
    },
    (err: unknown) => pack.destroy(err instanceof Error ? err : new Error(String(err))),
  );
  // A Node stream for the HTTP request; destroying it (a cancelled build) destroys the pack, which ends the walk.
  return Readable.from(pack, { objectMode: false });
}

/** One regular file as a tar archive (for `PUT /containers/{id}/archive` into its directory). */
export function packFile(name: string, data: Uint8Array, owner: { mode: number; uid: number; gid: number }): Promise<Buffer> {
  const pack = tar.pack();
  pack.entry({ name, type: "file", size: data.length, mode: owner.mode, uid: owner.uid, gid: owner.gid, mtime: new Date() }, Buffer.from(data));
  pack.finalize();
  return collect(pack);
}

/**
 * Many files as one tar archive, their parent directories included (root-owned, 0755), so
 * a whole tree goes into a container in one `PUT /archive`: the Engine's archive calls cost
 * hundreds of milliseconds each on a loaded host, one per file added up.
 */
export function packFiles(files: readonly { relativePath: string; mode: number; bytes: Uint8Array }[]): Promise<Buffer> {
  const pack = tar.pack();
  const mtime = new Date();
  const dirs = new Set<string>();
  for (const file of files) {
    const parts = file.relativePath.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (dirs.has(dir)) continue;
      dirs.add(dir);
      pack.entry({ name: dir, type: "directory", mode: 0o755, uid: 0, gid: 0, mtime });
    }
    pack.entry({ name: file.relativePath, type: "file", size: file.bytes.length, mode: file.mode & 0o7777, uid: 0, gid: 0, mtime }, Buffer.from(file.bytes));
  }
  pack.finalize();
  return collect(pack);
}

/** A read's outcome: the bytes, or why there are none (the caller turns it into a typed error). */
export type ExtractedFile = { kind: "file"; bytes: Buffer } | { kind: "too_large"; size: number } | { kind: "not_a_file"; type: string };

/**
 * The first entry of `archive`: its bytes when it is a regular file of at most `maxBytes`
 * (judged from the header's size, before its bytes are read), else what it is. The rest of
 * the archive is not read; the caller closes the stream.
 */
export async function extractFirstFile(archive: Readable, maxBytes: number): Promise<ExtractedFile> {
  const extract = tar.extract();
  copyInto(extract, archive).catch((err: unknown) => extract.destroy(err instanceof Error ? err : new Error(String(err))));
  try {
    for await (const entry of extract) {
      const { type, size } = entry.header;
      if (type !== "file" && type !== "contiguous-file") return { kind: "not_a_file", type };
      if (size > maxBytes) return { kind: "too_large", size };
      return { kind: "file", bytes: await collect(entry) };
    }
    return { kind: "not_a_file", type: "empty archive" };
  } finally {
    extract.destroy();
  }
}

/** Writes a Node stream into a tar-stream (streamx) writable with backpressure, then ends it; stops when the writable is destroyed. */
function copyInto(sink: TarWritable, source: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let finished = false;
    const stop = (err?: Error): void => {
      source.destroy();
      if (err) reject(err);
      else resolve();
    };
    sink.on("close", () => stop(sink.destroyed && !finished ? new Error("tar stream closed early") : undefined));
    sink.on("error", (err) => stop(err));
    sink.on("finish", () => {
      finished = true;
      resolve();
    });
    source.on("data", (chunk: Buffer) => {
      if (!sink.write(chunk)) {
        source.pause();
        sink.once("drain", () => source.resume());
      }
    });
    source.on("end", () => sink.end(null));
    source.on("error", (err) => {
      sink.destroy(err);
      reject(err);
    });
  });
}

async function collect(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

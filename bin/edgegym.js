#!/usr/bin/env node
/* global process -- a plain Node script outside the TypeScript build */
// Checked before anything else loads: on Node < 22 the native better-sqlite3 build (made for
// Node 22's ABI) kills the process with a segfault and no message. Nothing here may use
// syntax or APIs newer than Node 14.8 (top-level await) can run, and the CLI is imported only
// after the check.
// 22.3 at least: mathjs loads on first use through process.getBuiltinModule, new in 22.3.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 3)) {
  process.stderr.write(
    `edgegym needs Node.js 22.3 or newer; this is Node ${process.versions.node} (${process.execPath}).\n` +
      "Install Node 22 (https://nodejs.org) or put it first on PATH, then run the command again.\n",
  );
  process.exit(78);
}
// The CLI runs from dist/: shipped built in the package (prepack), compiled in a checkout by
// ensureBuild on first use and whenever src/ changed since.
const { ensureBuild } = await import("./ensure-build.js");
ensureBuild();
// Before the CLI's modules resolve: a shortcut past a slow path of Node's resolver (start-up).
const { installResolveHooks } = await import("../dist/server/node/resolve-hooks.js");
installResolveHooks();
await import("../dist/server/node/cli.js");

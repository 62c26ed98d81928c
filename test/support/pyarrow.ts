import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

const hasPyarrow = (python: string): boolean => existsSync(python) && spawnSync(python, ["-c", "import pyarrow.parquet"], { timeout: 30_000 }).status === 0;

/**
 * A Python with pyarrow from PyPI, to check that what we write is what the Python data
 * stack reads: the trainer adapter's venv when it has pyarrow, else a venv cached under
 * ~/.cache/edgegym (pip install pyarrow, about 10 s once). Null when neither can be had
 * (no python3, no PyPI): the caller then says so and checks with a JS reader only.
 */
export function pyarrowPython(): string | null {
  const adapter = resolve("trainer-adapter/.venv/bin/python");
  if (hasPyarrow(adapter)) return adapter;
  const venv = process.env.EDGEGYM_PYARROW_VENV ?? join(homedir(), ".cache", "edgegym", "pyarrow-venv");
  const python = join(venv, "bin", "python");
  if (hasPyarrow(python)) return python;
  if (spawnSync("python3", ["-m", "venv", venv], { timeout: 60_000 }).status !== 0) return null;
  const pip = spawnSync(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pyarrow"], { timeout: 180_000 });
  return pip.status === 0 && hasPyarrow(python) ? python : null;
}

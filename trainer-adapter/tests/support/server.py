"""Starts the real TypeScript edgegym server (built dist/) for a test, and stops it after."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[3]
SUPPORT = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_binary() -> str:
    node = os.environ.get("EDGEGYM_NODE") or shutil.which("node")
    if not node:
        raise RuntimeError("node not found on PATH (Node 22+ is needed to run the edgegym server)")
    return node


def write_env_module(directory: Path) -> Path:
    """The test environments as a module the server can import: ``zod`` resolves through a
    node_modules link to the repository's, so the module shares the server's zod."""
    dist = REPO / "dist"
    if not (dist / "server" / "node" / "cli.js").exists():
        raise RuntimeError("dist/ is missing: run `npm run build` in the repository root first")
    directory.mkdir(parents=True, exist_ok=True)
    link = directory / "node_modules"
    if not link.exists():
        link.symlink_to(REPO / "node_modules", target_is_directory=True)
    source = (SUPPORT / "test_envs.mjs").read_text().replace("__DIST__", dist.as_uri())
    path = directory / "test_envs.mjs"
    path.write_text(source)
    return path


def wait_healthy(proc: subprocess.Popen[bytes], url: str, log_path: Path, name: str, timeout: float, *, poll: float) -> bool:
    """Polls ``url``/health until it answers 200 (True) or ``timeout`` passes (False);
    raises with the log's tail if the process exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{log_path.read_text(errors='replace')[-4000:]}")
        try:
            if httpx.get(url + "/health", timeout=1.0).status_code == 200:
                return True
        except httpx.TransportError:
            pass
        time.sleep(poll)
    return False


class EdgegymServer:
    """``node bin/edgegym.js serve`` on a free port with a fresh SQLite file."""

    def __init__(
        self,
        workdir: Path,
        *,
        env_module: bool = True,
        api_keys: str | None = None,
        env: dict[str, str] | None = None,
        args: list[str] | None = None,
    ) -> None:
        self.workdir = workdir
        #: More ``serve`` flags (``--env harbor:DIR``, ``--host``).
        self.extra_args = list(args or [])
        self.env_module = env_module
        self.api_keys = api_keys
        self.extra_env = env or {}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / f"server-{self.port}.log"
        self.db_path = self.workdir / f"edgegym-{self.port}.db"

    def start(self, timeout: float = 30.0) -> "EdgegymServer":
        args = [node_binary(), str(REPO / "bin" / "edgegym.js"), "serve", "--port", str(self.port), "--db", str(self.db_path)]
        if self.env_module:
            args += ["--env", str(write_env_module(self.workdir / "envs"))]
        args += self.extra_args
        env = {**os.environ, "EDGEGYM_REAP_INTERVAL_SECONDS": "0", **self.extra_env}
        if self.api_keys:
            env["EDGEGYM_API_KEYS"] = self.api_keys
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env)
        if wait_healthy(self.proc, self.url, self.log_path, "edgegym server", timeout, poll=0.1):
            return self
        self.stop()
        raise RuntimeError(f"edgegym server did not answer /health within {timeout} s:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> "EdgegymServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

"""verifiers 0.4.0's Docker runtime, driven directly, for `npm run bench:sandbox`.

bench/sandbox.ts starts this with the Python of `scripts/verifiers-venv.sh vf04` and sends
one JSON request per line on stdin; each answer is one JSON line on stdout. Requests run one
at a time, so the Node side can interleave them with edgegym's and time both in one window.

What is driven, and why this way: verifiers' `HarborTaskset` needs Python 3.12 and the
`harbor` CLI, and rejects Dockerfile-only tasks, so this drives the pieces underneath it:
`verifiers.v1.runtimes.docker.DockerRuntime` (`start`, `run`, `write`, `stop`: the docker
CLI in subprocesses) on the image edgegym built for the task, with the task's cpus and
memory as HarborTaskset maps them, and the verifier of `verifiers.v1.tasksets.harbor.
taskset.HarborTask.solved` (stage tests/ as a tarball, `bash /tests/test.sh`, reward.json
else reward.txt) on a `HarborData` naming the task directory. The oracle is Harbor's:
solution/ written to /solution, then `(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1`.

Ops: ping; cold {image, task_dir}; open {image, task_dir} -> {handle, container};
exec_true {handle}; close {handle}; trial {image, task_dir}; trials {image, task_dir, n}.
Every op runs under a timeout; every runtime is stopped in a `finally`, and at EOF on stdin
(the bench exited) whatever is still open is stopped too. Containers carry the label
`verifiers.run=$VF_RUN_ID`, so the bench removes any that survive.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from verifiers.v1.runtimes.docker import DockerConfig, DockerRuntime
from verifiers.v1.tasksets.harbor.taskset import HarborData, HarborTask

OP_TIMEOUT_S = 180.0
ORACLE = "mkdir -p /logs/agent && chmod +x /solution/solve.sh && (/solution/solve.sh) > /logs/agent/oracle.txt 2>&1"

open_runtimes: dict[int, DockerRuntime] = {}
next_handle = 0


def ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


def docker_config(image: str, task_dir: str) -> DockerConfig:
    """The task's box as HarborTaskset sizes it: cpus, memory_mb / 1024 GB, workdir (else /app)."""
    env = tomllib.loads((Path(task_dir) / "task.toml").read_text()).get("environment", {})
    memory_mb = env.get("memory_mb")
    return DockerConfig(
        image=image,
        workdir=env.get("workdir") or "/app",
        cpu=env.get("cpus"),
        memory=None if memory_mb is None else memory_mb / 1024,
    )


class Metrics:
    """The one thing `HarborTask.run_verifier` asks of its trace: a place for extra reward keys."""

    def __init__(self) -> None:
        self.values: dict[str, float] = {}

    def record_metrics(self, values: dict[str, float]) -> None:
        self.values.update(values)


async def cold(image: str, task_dir: str) -> dict[str, Any]:
    """Create the box, then `true` in it: the first command's reply, from nothing running."""
    runtime = DockerRuntime(docker_config(image, task_dir))
    t0 = time.perf_counter()
    try:
        await runtime.start()
        created = ms(t0)
        result = await runtime.run(["true"], {})
        first = ms(t0)
        if result.exit_code != 0:
            raise RuntimeError(f"true exited {result.exit_code}: {result.stderr.strip()}")
    finally:
        t1 = time.perf_counter()
        await runtime.stop()
        destroyed = ms(t1)
    return {"create_ms": created, "first_ms": first, "destroy_ms": destroyed}


async def open_box(image: str, task_dir: str) -> dict[str, Any]:
    global next_handle
    runtime = DockerRuntime(docker_config(image, task_dir))
    next_handle += 1
    open_runtimes[next_handle] = runtime
    await runtime.start()
    return {"handle": next_handle, "container": runtime._container}


async def exec_true(handle: int) -> dict[str, Any]:
    runtime = open_runtimes[handle]
    t0 = time.perf_counter()
    result = await runtime.run(["true"], {})
    elapsed = ms(t0)
    if result.exit_code != 0:
        raise RuntimeError(f"true exited {result.exit_code}: {result.stderr.strip()}")
    return {"ms": elapsed}


async def close_box(handle: int) -> dict[str, Any]:
    runtime = open_runtimes.pop(handle)
    t0 = time.perf_counter()
    await runtime.stop()
    return {"ms": ms(t0)}


async def trial(image: str, task_dir: str) -> dict[str, Any]:
    """Harbor's oracle trial on verifiers' runtime: create, oracle, verifier, reward, destroy."""
    task = HarborTask(HarborData(name=Path(task_dir).name, task_dir=task_dir, image=image))
    runtime = DockerRuntime(docker_config(image, task_dir))
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        await runtime.start()
        phases["create_ms"] = ms(t0)
        t = time.perf_counter()
        solution = Path(task_dir) / "solution"
        for path in sorted(p for p in solution.rglob("*") if p.is_file()):
            await runtime.write(f"/solution/{path.relative_to(solution).as_posix()}", path.read_bytes())
        ran = await runtime.run(["bash", "-c", ORACLE], {"DEBIAN_FRONTEND": "noninteractive"})
        if ran.exit_code != 0:
            raise RuntimeError(f"solve.sh exited {ran.exit_code}")
        phases["oracle_ms"] = ms(t)
        t = time.perf_counter()
        scores = await task.solved(runtime, Metrics())
        phases["verify_ms"] = ms(t)
        reward = scores["reward"] if isinstance(scores, dict) else scores
    finally:
        t = time.perf_counter()
        await runtime.stop()
        phases["destroy_ms"] = ms(t)
    return {"ms": ms(t0), "reward": reward, **phases}


async def trials(image: str, task_dir: str, n: int) -> dict[str, Any]:
    """`n` oracle trials at once on one event loop (asyncio.gather), each bounded."""
    t0 = time.perf_counter()
    results = await asyncio.gather(*(asyncio.wait_for(trial(image, task_dir), OP_TIMEOUT_S) for _ in range(n)), return_exceptions=True)
    wall = ms(t0)
    done = [r for r in results if isinstance(r, dict)]
    errors = [f"{type(r).__name__}: {str(r)[:200]}" for r in results if not isinstance(r, dict)]
    return {"wall_ms": wall, "completed": len(done), "errors": errors, "rewards": [r["reward"] for r in done], "trial_ms": [r["ms"] for r in done]}


async def handle(request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    if op == "ping":
        import importlib.metadata

        return {"python": sys.version.split()[0], "verifiers": importlib.metadata.version("verifiers")}
    if op == "cold":
        return await cold(request["image"], request["task_dir"])
    if op == "open":
        return await open_box(request["image"], request["task_dir"])
    if op == "exec_true":
        return await exec_true(request["handle"])
    if op == "close":
        return await close_box(request["handle"])
    if op == "trial":
        return await trial(request["image"], request["task_dir"])
    if op == "trials":
        return await trials(request["image"], request["task_dir"], int(request["n"]))
    raise ValueError(f"unknown op {op!r}")


async def main() -> None:
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            request = json.loads(line)
            timeout = OP_TIMEOUT_S * (2 if request.get("op") == "trials" else 1)
            try:
                answer = {"id": request.get("id"), "ok": True, **(await asyncio.wait_for(handle(request), timeout))}
            except Exception as err:  # noqa: BLE001 - every failure goes back to the bench as data
                answer = {"id": request.get("id"), "ok": False, "error": f"{type(err).__name__}: {err}"[:2000]}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        for runtime in list(open_runtimes.values()):
            await runtime.stop()
        open_runtimes.clear()


if __name__ == "__main__":
    asyncio.run(main())

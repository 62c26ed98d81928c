"""verifiers 0.4.0 running its mini_swe_agent harness on its Docker runtime, for
`npm run bench:harness` (bench/harness.ts): the peer of an edgegym harness episode.

bench/harness.ts starts this with the vf04 venv's Python and sends one JSON request per line
on stdin; each answer is one JSON line on stdout (requests run one at a time).

What runs is verifiers' own rollout: `Agent(AgentConfig(harness=mini_swe_agent, runtime=
DockerConfig(image=…), model=…, client=EvalClientConfig(base_url=<scripted upstream>)))`
entered (its owned `InterceptionServer` on 127.0.0.1), then `agent.run(HarborTask(HarborData(…)))`: a new container
(`docker run`, the egress proxy's listener passed into its network namespace), harness setup,
the harness's program (`python program.py …` = `minisweagent.run.mini.app()` with
`model.model_kwargs.api_base=<the interception URL>`), each model call through the interception
server to the upstream and into the trace, then HarborTask's reward (tests/ staged, `bash
/tests/test.sh`, reward.txt read) and the container removed.

One change, and why: `MiniSWEAgentHarness.setup`/`launch` call `runtime.prepare_uv_script`,
which bootstraps uv in the box and `uv sync`s mini-swe-agent 2.4.6 and litellm[proxy] 1.102.0
from PyPI at every rollout's setup. Boxes here cannot install from PyPI (HTTPS egress is
intercepted; docs: /work/shared/TOOLCHAIN.md), so `prepare_uv_script` is replaced by one that
writes the same script into the box and returns the image's pre-installed venv
(/opt/mini-swe-agent: mini-swe-agent 2.4.6, litellm 1.110.2) as its interpreter. This removes
the download/install time from verifiers' setup, which favours verifiers. Nothing else is
patched. The image is the one edgegym built for the task (no pull: Docker Hub is unreachable).

Usage: python vf_mini_rollout.py MODEL. Ops: ping; rollout {image, task_dir, instruction,
upstream} -> {ms, reward, ok, errors, calls, stop, timing}; each rollout gets its own Agent
(entered before the clock starts, left after it stops) for its own upstream's script.
Containers carry `verifiers.run=$VF_RUN_ID`, so the bench removes any that survive.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import platform
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import verifiers
from verifiers.v1.agent import Agent
from verifiers.v1.configs.agent import AgentConfig
from verifiers.v1.configs.client import EvalClientConfig
from verifiers.v1.harnesses.mini_swe_agent import MiniSWEAgentHarnessConfig
from verifiers.v1.runtimes.base import Runtime
from verifiers.v1.runtimes.docker import DockerConfig
from verifiers.v1.tasksets.harbor.taskset import HarborData, HarborTask

PREINSTALLED_PYTHON = "/opt/mini-swe-agent/bin/python"
OP_TIMEOUT_S = 240.0


async def prepare_preinstalled(self: Runtime, script: str | bytes, env: dict[str, str] | None = None, *, activate: bool = True) -> list[str]:
    """`Runtime.prepare_uv_script` without uv: the script written once per box, run by the image's venv."""
    data = script.encode() if isinstance(script, str) else script
    path = f"/tmp/vf-script-{hashlib.sha256(data).hexdigest()[:16]}.py"
    written: set[str] = self.__dict__.setdefault("_bench_scripts", set())
    if path not in written:
        await self.write(path, data)
        written.add(path)
    return [PREINSTALLED_PYTHON, path]


Runtime.prepare_uv_script = prepare_preinstalled  # type: ignore[method-assign]


def span(timing: Any, name: str) -> float | None:
    part = getattr(timing, name, None)
    start, end = getattr(part, "start", None), getattr(part, "end", None)
    return None if start is None or end is None else (end - start) * 1000


class Driver:
    def __init__(self, model: str) -> None:
        os.environ.setdefault("VF_BENCH_UPSTREAM_KEY", "sk-bench-upstream")
        self.model = model
        self.agents: dict[tuple[str, str], Agent] = {}

    async def agent(self, image: str, task_dir: str, upstream: str) -> Agent:
        """One Agent per image and upstream, entered (its interception server started) before the clock starts."""
        if (image, upstream) not in self.agents:
            env = tomllib.loads((Path(task_dir) / "task.toml").read_text()).get("environment", {})
            memory_mb = env.get("memory_mb")
            config = AgentConfig(
                harness=MiniSWEAgentHarnessConfig(
                    id="mini_swe_agent",
                    # As edgegym's agent command sets them: prices from the local map, one try per call.
                    env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1"},
                ),
                runtime=DockerConfig(image=image, workdir=env.get("workdir") or "/app", cpu=env.get("cpus"), memory=None if memory_mb is None else memory_mb / 1024),
                model=self.model,
                client=EvalClientConfig(base_url=upstream, api_key_var="VF_BENCH_UPSTREAM_KEY"),
            )
            agent = Agent(config)
            await agent.__aenter__()
            self.agents[(image, upstream)] = agent
        return self.agents[(image, upstream)]

    async def rollout(self, image: str, task_dir: str, instruction: str, upstream: str) -> dict[str, Any]:
        agent = await self.agent(image, task_dir, upstream)
        data = HarborData(prompt=instruction, image=image, workdir="/app", task_dir=task_dir, name=Path(task_dir).name)
        task = HarborTask(data)
        t0 = time.perf_counter()
        try:
            trace = await agent.run(task)
            ms = (time.perf_counter() - t0) * 1000
        finally:
            # This rollout's upstream is used up: its agent (and interception server) goes.
            await self.agents.pop((image, upstream)).__aexit__(None, None, None)
        reward = trace.rewards.get("solved") or next(iter(trace.rewards.values()), None)
        timing = trace.timing
        return {
            "ms": ms,
            "ok": trace.ok,
            "reward": None if reward is None else reward.score,
            "errors": [f"{e.type}: {e.message}"[:400] for e in trace.errors],
            "calls": len(trace.calls),
            "stop": trace.stop_condition,
            "timing": {name: span(timing, name) for name in type(timing).model_fields},
            # Wall clock (epoch seconds) of the agent phase, to line up with the upstream's call times.
            "agent_span": None if timing.agent.start is None or timing.agent.end is None else [timing.agent.start, timing.agent.end],
        }

    async def close(self) -> None:
        for agent in self.agents.values():
            await agent.__aexit__(None, None, None)


async def serve(driver: Driver) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        while line := await reader.readline():
            request = json.loads(line)
            rid, op = request.pop("id"), request.pop("op")
            try:
                if op == "ping":
                    result: dict[str, Any] = {"python": platform.python_version(), "verifiers": verifiers.__version__}
                elif op == "rollout":
                    result = await asyncio.wait_for(driver.rollout(**request), OP_TIMEOUT_S)
                else:
                    raise ValueError(f"unknown op {op}")
                answer = {"id": rid, "ok": True, **result}
            except Exception as err:  # noqa: BLE001 - reported to the bench
                answer = {"id": rid, "ok": False, "error": f"{type(err).__name__}: {err}"[:2000]}
            print(json.dumps(answer), flush=True)
    finally:
        await driver.close()


if __name__ == "__main__":
    logging.basicConfig(level=os.environ.get("VF_BENCH_LOG", "WARNING"), stream=sys.stderr)
    asyncio.run(serve(Driver(sys.argv[1])))

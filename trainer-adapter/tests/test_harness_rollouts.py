"""Harness episodes (an agent calling the model through the episode's endpoint, one turn per
call) into token-faithful training data: prefix merging, rewritten histories, failed and
token-less calls, rewards and per-episode GRPO advantages, and the GRPO trainer taking the
result. The episodes are hand-written JSON in the server's shape; the client side runs
against a mocked HTTP server."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import httpx
import pytest

from edgegym import AsyncClient
from edgegym.rollouts import (
    HarnessCollector,
    Rollout,
    RolloutGroup,
    TaskRef,
    TrajectoryUnavailable,
    assign_advantages,
    harness_group,
    harness_rollouts,
    harness_trajectories,
    read_harness_episode,
    start_harness_episode,
    wait_done,
)

OPENING = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Fix the bug."}]


def call(turn: int, prompt: list[int] | None, ids: list[int] | None, logprobs: list[float] | None = None, *, status: int = 200, error: Any = None, finish: str = "stop", wire: str = "chat", upstream: str = "vllm") -> dict[str, Any]:
    """One call turn as the server stores it."""
    sampled = None
    if ids is not None:
        sampled = {"token_ids": ids, "logprobs": logprobs if logprobs is not None else [-0.1 * (k + 1) for k in range(len(ids))]}
        if prompt is not None:
            sampled["prompt_token_ids"] = prompt
    reply = None if status != 200 else {"choices": [{"index": 0, "message": {"role": "assistant", "content": f"reply {turn}"}, "finish_reason": finish}]}
    return {
        "turn": turn,
        "message_count": 1,
        "created_at": "2026-01-01T00:00:00.000Z",
        "sampled": sampled,
        "call": {
            "wire": wire,
            "upstream": upstream,
            "model": "qwen",
            "stream": False,
            "request": {"model": "qwen", "messages": OPENING + [{"role": "user", "content": f"call {turn}"}]},
            "response": reply,
            "status": status,
            "error": error,
            "usage": {"prompt_tokens": len(prompt or []), "completion_tokens": len(ids or [])} if status == 200 else None,
            "latency_ms": 12.5,
        },
    }


def episode(calls: list[dict[str, Any]], *, episode_id: str = "ep_1", reward: float | None = 1.0, status: str = "done", failure: str | None = None, stop_reason: str = "agent_exit") -> dict[str, Any]:
    turns = [{"turn": 0, "message_count": len(OPENING), "sampled": None, "created_at": "2026-01-01T00:00:00.000Z"}, *calls]
    messages = list(OPENING) + [{"role": "assistant", "content": f"reply {c['turn']}"} for c in calls]
    score = None
    if reward is not None:
        # As the server sends it: a component that could not be scored carries its error (``Score.failure``).
        component = {"name": "tests", "weight": 1.0, "score": reward, **({"error": failure} if failure is not None else {})}
        score = {"reward": reward, "components": [component], "metrics": {"tests_passed": 3.0}}
    return {
        "episode_id": episode_id,
        "env_id": "harbor",
        "env_version": "1",
        "split": "train",
        "index": 4,
        "seed": 7,
        "args": {},
        "status": status,
        "turn": len(calls),
        "max_turns": 1000,
        "done": status != "active",
        "stop_reason": None if status == "active" else stop_reason,
        "truncated": stop_reason in ("agent_timeout", "call_limit"),
        "error": None,
        "messages": messages,
        "from_turn": 0,
        "next_from_turn": None,
        "turns": turns,
        "template_changes": [],
        "parent": None,
        "tools": [],
        "score": score,
        "agent": {"upstream": "vllm", "model": "qwen", "status": "exited", "exit_code": 0, "output_tail": "done", "seconds": 3.0, "calls": len(calls), "tokens": 0, "started_at": "2026-01-01T00:00:00.000Z"},
        "metadata": {},
        "created_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-01T00:00:00.000Z",
        "expires_at": "2026-01-02T00:00:00.000Z",
    }


# Three calls, each prompt extending the previous prompt + completion: one sequence.
P1 = [1, 2, 3]
C1 = [10, 11]
P2 = P1 + C1 + [20, 21]
C2 = [30]
P3 = P2 + C2 + [40]
C3 = [50, 51]


def check_faithful(traj, calls: list[dict[str, Any]]) -> None:
    """Every call of the sequence: the tokens before its span are exactly its prompt, the span
    exactly its completion with its logprobs; env tokens have mask 0 and logprob 0."""
    n = len(traj.completion_ids)
    assert len(traj.logprobs) == n and len(traj.env_mask) == n
    by_turn = {c["turn"]: c for c in calls}
    mask = [0] * n
    for (start, end), turn in zip(traj.turn_spans, traj.turns, strict=True):
        s = by_turn[turn]["sampled"]
        assert traj.prompt_ids + traj.completion_ids[:start] == s["prompt_token_ids"]
        assert traj.completion_ids[start:end] == s["token_ids"]
        assert traj.logprobs[start:end] == s["logprobs"]
        mask[start:end] = [1] * (end - start)
    assert traj.env_mask == mask
    assert all(lp == 0.0 for lp, m in zip(traj.logprobs, traj.env_mask) if m == 0)
    assert traj.env_mask[-1] == 1


def test_calls_that_extend_the_prompt_merge_into_one_sequence():
    calls = [call(1, P1, C1), call(2, P2, C2), call(3, P3, C3)]
    (traj,) = harness_trajectories(episode(calls))
    assert traj.prompt_ids == P1
    assert traj.completion_ids == [10, 11, 20, 21, 30, 40, 50, 51]
    assert traj.env_mask == [1, 1, 0, 0, 1, 0, 1, 1]
    assert traj.logprobs == pytest.approx([-0.1, -0.2, 0.0, 0.0, -0.1, 0.0, -0.1, -0.2])
    assert traj.turn_spans == [(0, 2), (4, 5), (6, 8)]
    assert traj.turns == [1, 2, 3]
    assert traj.completion_truncated is False
    assert traj.history[-1] == {"role": "assistant", "content": "reply 3"}
    check_faithful(traj, calls)


def test_the_client_models_parse_a_harness_episode_and_the_functions_take_them():
    from edgegym import models

    calls = [call(1, P1, C1), call(2, P2, C2), call(3, P3, C3)]
    raw = episode(calls, reward=0.5)
    ep = models.Episode.model_validate(raw)
    assert ep.agent is not None and ep.agent.status == "exited" and ep.agent.calls == 3
    first = ep.turns[1]
    assert first.call is not None and first.call.ok and first.call.wire == "chat" and first.call.usage.prompt_tokens == 3
    assert first.sampled.prompt_token_ids == P1 and first.sampled.template_hash is None
    assert ep.turns[0].call is None
    # The model and the JSON give the same trajectories and rollouts.
    assert harness_trajectories(ep) == harness_trajectories(raw)
    assert [r.completion_ids for r in harness_rollouts(ep)] == [r.completion_ids for r in harness_rollouts(raw)]
    assert harness_group([ep]).rollouts[0].reward == 0.5
    reply = models.ResetResponse.model_validate(
        {"episode_id": "ep_1", "env_id": "harbor", "env_version": "1", "split": "train", "index": 0, "seed": 0, "turn": 0, "messages": OPENING, "tools": [],
         "done": False, "max_turns": 1000, "expires_at": "2026-01-02T00:00:00.000Z",
         "model_endpoint": {"openai_base_url": "http://h/model/ep_1/v1", "anthropic_base_url": "http://h/model/ep_1", "api_key": "egk_x"}}
    )  # fmt: skip
    assert reply.model_endpoint.api_key == "egk_x"


def test_reset_with_an_agent_goes_over_http_with_the_agent_in_the_body():
    from edgegym import _calls, models

    call_ = _calls.reset("harbor", split=None, index=0, seed=None, args={"task": "count-errors"}, ttl_seconds=None, metadata=None, idempotency_key=None, agent={**AGENT, "limits": {"max_calls": 2}})
    assert call_.socket is None and call_.json == {"index": 0, "args": {"task": "count-errors"}, "agent": {**AGENT, "limits": {"max_calls": 2}}}
    plain = _calls.reset("harbor", split=None, index=0, seed=None, args=None, ttl_seconds=None, metadata=None, idempotency_key=None)
    assert plain.socket is not None and "agent" not in plain.json
    with pytest.raises(ValueError):
        models.AgentSpec.model_validate({**AGENT, "upstream": "no spaces allowed"})


def test_a_prompt_that_continues_right_after_the_completion_merges_with_no_env_tokens():
    calls = [call(1, P1, C1), call(2, P1 + C1, C2)]
    (traj,) = harness_trajectories(episode(calls))
    assert traj.completion_ids == C1 + C2 and traj.env_mask == [1, 1, 1]
    assert traj.turn_spans == [(0, 2), (2, 3)]
    check_faithful(traj, calls)


def test_a_rewritten_history_starts_a_new_sequence():
    rewritten = P1 + [99] + C2  # the harness summarised call 1's reply: not an extension
    calls = [call(1, P1, C1), call(2, P2, C2), call(3, rewritten, [60]), call(4, rewritten + [60, 70], [80, 81])]
    first, second = harness_trajectories(episode(calls))
    assert first.turns == [1, 2] and second.turns == [3, 4]
    assert first.prompt_ids == P1 and first.completion_ids == [10, 11, 20, 21, 30]
    assert second.prompt_ids == rewritten
    assert second.completion_ids == [60, 70, 80, 81] and second.env_mask == [1, 0, 1, 1]
    check_faithful(first, calls)
    check_faithful(second, calls)


def test_a_shorter_prompt_starts_a_new_sequence():
    calls = [call(1, P1, C1), call(2, P1[:2], [7])]
    first, second = harness_trajectories(episode(calls))
    assert second.prompt_ids == [1, 2] and second.completion_ids == [7]


def test_a_call_without_token_ids_is_refused():
    calls = [call(1, P1, C1), call(2, None, None, upstream="openai")]
    with pytest.raises(TrajectoryUnavailable, match=r"turn 2 .*'openai'.* no token ids"):
        harness_trajectories(episode(calls))
    with pytest.raises(TrajectoryUnavailable, match="no prompt_token_ids"):
        harness_trajectories(episode([call(1, None, C1)]))
    with pytest.raises(TrajectoryUnavailable, match="1 logprobs for 2 token ids"):
        harness_trajectories(episode([call(1, P1, C1, [-0.5])]))
    c = call(1, P1, C1)
    del c["sampled"]["logprobs"]
    with pytest.raises(TrajectoryUnavailable, match="none logprobs"):
        harness_trajectories(episode([c]))


def test_an_ordinary_episode_is_not_a_harness_episode():
    ep = episode([call(1, P1, C1)])
    del ep["turns"][1]["call"]
    with pytest.raises(TrajectoryUnavailable, match="not a harness episode"):
        harness_trajectories(ep)


def test_a_failed_call_in_the_middle_is_refused_or_skipped():
    calls = [call(1, P1, C1), call(2, None, None, status=502, error="upstream timed out"), call(3, P2, C2)]
    with pytest.raises(TrajectoryUnavailable, match=r"turn 2 failed \(status 502: upstream timed out\).*turn 3"):
        harness_trajectories(episode(calls))
    (traj,) = harness_trajectories(episode(calls), failed_calls="skip")
    assert traj.turns == [1, 3]
    check_faithful(traj, calls)
    # An error as an object ({"message": ...}) reads the same.
    calls[1] = call(2, None, None, status=200, error={"message": "stream cut"})
    with pytest.raises(TrajectoryUnavailable, match="stream cut"):
        harness_trajectories(episode(calls))


def test_failed_calls_at_the_end_are_dropped():
    calls = [call(1, P1, C1), call(2, None, None, status=429, error="call_limit"), call(3, None, None, status=504, error="killed")]
    (traj,) = harness_trajectories(episode(calls, stop_reason="call_limit"))
    assert traj.turns == [1]
    with pytest.raises(TrajectoryUnavailable, match="no successful model call"):
        harness_trajectories(episode([call(1, None, None, status=500, error="boom")]))


def test_completion_truncated_follows_the_last_call_of_the_sequence():
    (traj,) = harness_trajectories(episode([call(1, P1, C1, finish="length")]))
    assert traj.completion_truncated
    (traj,) = harness_trajectories(episode([call(1, P1, C1, finish="length"), call(2, P2, C2)]))
    assert not traj.completion_truncated
    responses = call(1, P1, C1, wire="responses")
    responses["call"]["response"] = {"status": "incomplete", "output": []}
    assert harness_trajectories(episode([responses]))[0].completion_truncated
    messages = call(1, P1, C1, wire="messages")
    messages["call"]["response"] = {"stop_reason": "max_tokens", "content": []}
    assert harness_trajectories(episode([messages]))[0].completion_truncated


def test_rollouts_carry_the_episode_reward():
    calls = [call(1, P1, C1), call(2, P2, C2), call(3, P1 + [99], [60])]
    rollouts = harness_rollouts(episode(calls, reward=0.75))
    assert len(rollouts) == 2
    for r in rollouts:
        assert r.ok and r.reward == 0.75
        assert r.episode_id == "ep_1" and r.env_id == "harbor"
        assert r.task == TaskRef(index=4, seed=7, split="train")
        assert r.components == {"tests": 0.75} and r.metrics == {"tests_passed": 3.0}
        assert r.stop_reason == "agent_exit" and not r.truncated
        assert len(r.completion_ids) == len(r.logprobs) == len(r.env_mask)
        assert r.advantage == 0.0
    assert [r.turns for r in rollouts] == [2, 1]
    assert rollouts[0].model_tokens == 3 and rollouts[1].model_tokens == 1

    failed = harness_rollouts(episode(calls, reward=0.0, failure="verifier_timeout: the tests ran past 60 s"))
    assert all(not r.ok and r.error == "score_failed: verifier_timeout: the tests ran past 60 s" for r in failed)
    # An error that is not a scoring failure (a rubric component's own message) is an earned 0.
    assert all(r.ok for r in harness_rollouts(episode(calls, reward=0.0, failure="wrong answer")))
    with pytest.raises(ValueError, match="still active"):
        harness_rollouts(episode(calls, status="active", reward=None))
    with pytest.raises(ValueError, match="not scored"):
        harness_rollouts(episode(calls, reward=None))


def test_group_advantages_are_per_episode():
    a = episode([call(1, P1, C1), call(2, [5], [6])], episode_id="a", reward=1.0)  # two sequences
    b = episode([call(1, P1, C1)], episode_id="b", reward=0.0)
    c = episode([call(1, P1, C1)], episode_id="c", reward=0.5)
    broken = episode([call(1, None, None, upstream="anthropic")], episode_id="d", reward=1.0)
    group = harness_group([a, b, c, broken], task=TaskRef(index=4, seed=7))
    assert [r.episode_id for r in group.rollouts] == ["a", "a", "b", "c", "d"]
    assert group.rollouts[-1].error.startswith("TrajectoryUnavailable: ") and group.rollouts[-1].advantage == 0.0
    assert not group.rollouts[-1].completion_ids

    # The same as assign_advantages over one rollout per episode (TRL's rule): episode a counts once.
    ref = RolloutGroup(task=group.task, rollouts=[Rollout(env_id="harbor", task=group.task, reward=x) for x in (1.0, 0.0, 0.5)])
    assign_advantages([ref])
    want = {"a": ref.rollouts[0].advantage, "b": ref.rollouts[1].advantage, "c": ref.rollouts[2].advantage, "d": 0.0}
    assert [r.advantage for r in group.rollouts] == pytest.approx([want[r.episode_id] for r in group.rollouts])
    assert want["a"] == pytest.approx(0.5 / (0.5 + 1e-4))

    active = episode([call(1, P1, C1)], episode_id="e", status="active", reward=None)
    g2 = harness_group([a, active])
    assert [r.ok for r in g2.rollouts] == [True, True, False]
    assert g2.rollouts[2].error.startswith("ValueError: ") and g2.rollouts[0].advantage == 0.0  # one episode left: no spread


def test_harness_rollouts_train_in_the_grpo_trainer(tmp_path):
    torch = pytest.importorskip("torch")
    from support.tiny_model import build_model, build_tokenizer

    from edgegym.grpo.batching import collate
    from edgegym.grpo.config import GRPOConfig
    from edgegym.grpo.trainer import GRPOTrainer

    tokenizer = build_tokenizer()  # its own: the trainer sets a pad token on it

    def ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    p1 = ids("<|im_start|>user\nfix it<|im_end|>\n<|im_start|>assistant\n")
    c1 = ids("ls<|im_end|>")
    p2 = p1 + c1 + ids("\n<|im_start|>user\nREADME<|im_end|>\n<|im_start|>assistant\n")
    c2 = ids("done<|im_end|>")
    good = episode([call(1, p1, c1), call(2, p2, c2)], episode_id="good", reward=1.0)
    bad = episode([call(1, p1, ids("rm<|im_end|>"))], episode_id="bad", reward=0.0)
    group = harness_group([good, bad])
    rollouts = [r for r in group.rollouts if r.ok]
    assert len(rollouts) == 2 and rollouts[0].advantage > 0 > rollouts[1].advantage

    batch = collate(rollouts, pad_id=int(tokenizer.pad_token_id or 0))
    first = rollouts[0]
    C = batch.completion_width
    assert batch.env_mask[0, : len(first.env_mask)].tolist() == [float(x) for x in first.env_mask]
    assert batch.sampler_logps[0, : len(first.logprobs)].tolist() == pytest.approx(first.logprobs)
    assert batch.input_ids[0, -C:][: len(first.completion_ids)].tolist() == first.completion_ids
    assert int(batch.loss_mask(False)[0].sum()) == first.model_tokens

    # The sampler logprobs above are made up: importance sampling would mask every sequence.
    config = GRPOConfig(
        model="tiny", server_url="http://127.0.0.1:9", env_id="harbor", backend="transformers", output_dir=str(tmp_path),
        max_steps=1, num_generations=2, tasks_per_step=1, num_batches_ahead=0, learning_rate=1e-3, importance_sampling=False,
    )
    trainer = GRPOTrainer(config, model=build_model(tokenizer), tokenizer=tokenizer)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    metrics = trainer.train_on(rollouts)
    assert trainer.version == 1
    assert math.isfinite(metrics["loss"]) and metrics["grad_norm"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))


# --- starting and waiting, against a mocked server -----------------------------------


class FakeServer:
    """Serves harness episodes as the server would: reset with an agent, paged GET, score."""

    def __init__(self, finished: dict[str, dict[str, Any]], polls_active: int = 1) -> None:
        self.finished = finished  # what each episode looks like once its agent exited (unscored)
        self.order = list(finished)
        self.polls_active = polls_active
        self.polls: dict[str, int] = {}
        self.resets: list[tuple[dict[str, Any], str | None]] = []
        self.scored: list[str] = []
        self.closed: list[str] = []

    def page(self, ep: dict[str, Any], from_turn: int, limit: int) -> dict[str, Any]:
        turns = ep["turns"][from_turn : from_turn + limit]
        skip = sum(t["message_count"] for t in ep["turns"][:from_turn])
        take = sum(t["message_count"] for t in turns)
        end = from_turn + len(turns)
        return {**ep, "from_turn": from_turn, "turns": turns, "messages": ep["messages"][skip : skip + take], "next_from_turn": end if end < len(ep["turns"]) else None}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST" and path.endswith("/episodes"):
            body = json.loads(request.content)
            self.resets.append((body, request.headers.get("idempotency-key")))
            eid = self.order[len(self.resets) - 1]
            return httpx.Response(201, json={"episode_id": eid, "turn": 0, "messages": OPENING, "model_endpoint": {"openai_base_url": "http://x/v1", "anthropic_base_url": "http://x", "api_key": "k"}})
        eid = path.split("/")[3]
        ep = self.finished[eid]
        if request.method == "GET":
            n = self.polls.get(eid, 0)
            self.polls[eid] = n + 1
            if n < self.polls_active:
                ep = {**ep, "status": "active", "done": False, "turns": ep["turns"][:1], "messages": ep["messages"][:2], "turn": 0}
            q = request.url.params
            return httpx.Response(200, json=self.page(ep, int(q.get("from_turn", 0)), int(q.get("limit", 1000))))
        if request.method == "POST" and path.endswith("/score"):
            self.scored.append(eid)
            reward = {"ep_a": 1.0, "ep_b": 0.0}.get(eid, 0.5)
            ep["score"] = {"reward": reward, "components": [], "metrics": {}}
            return httpx.Response(200, json={"episode_id": eid, "score": ep["score"], "scored_at": "2026-01-01T00:00:00.000Z"})
        if request.method == "DELETE":
            self.closed.append(eid)
            return httpx.Response(200, json={"episode_id": eid, "status": "closed"})
        return httpx.Response(404, json={"error": {"code": "route_not_found", "message": path, "request_id": "r"}})


AGENT = {"command": "mini -y -t \"$EDGEGYM_INSTRUCTION\"", "upstream": "vllm", "model": "qwen", "timeout_seconds": 60}
LONG = [call(1, P1, C1), call(2, P2, C2), call(3, P3, C3)]


def client_for(fake: FakeServer) -> AsyncClient:
    return AsyncClient("http://edgegym.test", http_client=httpx.AsyncClient(transport=httpx.MockTransport(fake)))


def test_start_wait_score_and_read_pages():
    fake = FakeServer({"ep_a": episode(LONG, episode_id="ep_a", reward=None)}, polls_active=2)

    async def main():
        async with client_for(fake) as gym:
            reset = await start_harness_episode(gym, "harbor", AGENT, index=4, seed=7, args={"task": "fix"})
            done = await wait_done(gym, reset["episode_id"], timeout=10, poll_seconds=0.0, page_turns=2)
            again = await read_harness_episode(gym, "ep_a", page_turns=1)
            return reset, done, again

    reset, done, again = asyncio.run(main())
    body, key = fake.resets[0]
    assert body == {"index": 4, "seed": 7, "args": {"task": "fix"}, "agent": AGENT}
    assert key and key.startswith("edgegym-py-")
    assert reset["model_endpoint"]["api_key"] == "k"
    assert fake.scored == ["ep_a"]
    assert fake.polls["ep_a"] == 3 + 2 + 4  # two active polls, the one that saw it done, two pages, then four
    assert [t["turn"] for t in done["turns"]] == [0, 1, 2, 3] and len(done["messages"]) == 5
    assert done["next_from_turn"] is None and done["score"]["reward"] == 1.0
    assert again["turns"] == done["turns"] and again["messages"] == done["messages"]
    (r,) = harness_rollouts(done)
    assert r.reward == 1.0 and r.turn_spans == [(0, 2), (4, 5), (6, 8)]


def test_wait_done_times_out_while_active():
    fake = FakeServer({"ep_a": episode(LONG, episode_id="ep_a", reward=None)}, polls_active=10**6)

    async def main():
        async with client_for(fake) as gym:
            await wait_done(gym, "ep_a", timeout=0.05, poll_seconds=0.01)

    with pytest.raises(TimeoutError, match="still active"):
        asyncio.run(main())
    assert fake.scored == []


def test_harness_collector_collects_a_group():
    fake = FakeServer(
        {
            "ep_a": episode(LONG, episode_id="ep_a", reward=None),
            "ep_b": episode([call(1, P1, [12]), call(2, [9], [13])], episode_id="ep_b", reward=None),
            "ep_c": episode([call(1, None, None, upstream="openai")], episode_id="ep_c", reward=None),
        }
    )

    async def main():
        async with client_for(fake) as gym:
            collector = HarnessCollector(gym, AGENT, env_args={"task": "fix"}, poll_seconds=0.0, max_concurrency=1)
            return await collector.collect("harbor", [TaskRef(index=4, seed=7)], num_generations=3)

    (group,) = asyncio.run(main())
    assert sorted(fake.scored) == ["ep_a", "ep_b", "ep_c"] and sorted(fake.closed) == ["ep_a", "ep_b", "ep_c"]
    assert all(body["agent"] == AGENT and body["args"] == {"task": "fix"} for body, _ in fake.resets)
    by_ep: dict[str, list[Rollout]] = {}
    for r in group.rollouts:
        by_ep.setdefault(r.episode_id, []).append(r)
    assert [len(by_ep[e]) for e in ("ep_a", "ep_b", "ep_c")] == [1, 2, 1]
    assert not by_ep["ep_c"][0].ok and "no token ids" in by_ep["ep_c"][0].error
    a, b = by_ep["ep_a"][0].advantage, by_ep["ep_b"][0].advantage
    assert a > 0 > b and by_ep["ep_b"][1].advantage == b and a == pytest.approx(-b)


def test_harness_collector_reports_an_episode_that_never_ends():
    fake = FakeServer({"ep_a": episode(LONG, episode_id="ep_a", reward=None), "ep_b": episode(LONG, episode_id="ep_b", reward=None)}, polls_active=10**6)

    async def main():
        async with client_for(fake) as gym:
            collector = HarnessCollector(gym, {**AGENT, "timeout_seconds": 1}, poll_seconds=0.01, wait_grace_seconds=-0.95)
            return await collector.collect("harbor", [TaskRef(index=0, seed=0)], num_generations=2)

    (group,) = asyncio.run(main())
    assert len(group.rollouts) == 2 and all(r.error.startswith("TimeoutError: ") and r.advantage == 0.0 for r in group.rollouts)
    assert sorted(fake.closed) == ["ep_a", "ep_b"] and fake.scored == []

"""Training on seated episodes (docs/multi-agent.md) against the real server: tic-tac-toe-2p
played by the tiny test model in self-play (both seats, one policy) and against the
environment's minimax. Each seat's trajectory is its own (its prompt, its sampled tokens
under mask 1, the other seat's moves only as the environment's text under mask 0), groups
are per seat, rewards are the seat's own from ``score.seats``, and the GRPO trainer runs
its steps on them."""

from __future__ import annotations

import asyncio
import math
import random

import pytest
import torch

from edgegym import AsyncClient, Client
from edgegym.grpo import GRPOConfig, GRPOTrainer
from edgegym.rollouts import CollectorSettings, RolloutCollector, SamplingParams, TaskRef, TransformersGenerator

from .support.seat_games import ENV, random_game, seat_transcripts
from .support.tiny_model import CORPUS, build_model, build_tokenizer, warm_up
from .test_rollouts import RecordingGenerator, check_provenance


class OnePolicy(RecordingGenerator):
    """Records every request, and exposes the model it samples from (the trainer's in-process
    weight sync reads ``generator.model``)."""

    @property
    def model(self):
        return self.inner.model


@pytest.fixture(scope="module")
def seat_tokenizer(server):
    """The tiny byte-level tokenizer, its merges learnt from tic-tac-toe-2p's own text as well
    (a seat's conversation is then about 350 tokens rather than 800: a CPU test stays short)."""
    texts: list[str] = []
    rng = random.Random(1)
    with Client(server.url) as gym:
        for g in range(6):
            episode_id = random_game(gym, g, rng)
            for seat in ("x", "o"):
                texts += [str(m.content) for m in gym.episode(episode_id, seat=seat).messages]
    return build_tokenizer(600, CORPUS + texts)


@pytest.fixture(scope="module")
def seat_model_dir(server, seat_tokenizer, tmp_path_factory):
    """The tiny randomly initialised Llama, warmed up on both seats' views of random games so
    it answers <move>N</move> (its cells are still about random): saved like a checkpoint."""
    model = build_model(seat_tokenizer)
    warm_up(model, seat_transcripts(server.url, seat_tokenizer, games=16), steps=80, batch=8)
    out = tmp_path_factory.mktemp("seat-model")
    model.save_pretrained(out)
    seat_tokenizer.save_pretrained(out)
    return out


@pytest.fixture()
def seat_model(seat_model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(seat_model_dir).eval()


SETTINGS = dict(sampling=SamplingParams(max_tokens=12), max_seq_len=1000, close_episodes=False)


def collect(server, model, tokenizer, tasks, n, *, mark_untrainable=(), **settings):
    """``collect`` of tic-tac-toe-2p, and its groups rebuilt from the server by (episode, seat)."""
    gen = OnePolicy(TransformersGenerator(model, tokenizer))

    async def main():
        async with AsyncClient(server.url) as gym:
            collector = RolloutCollector(gym, gen, tokenizer, CollectorSettings(**{**SETTINGS, **settings}))
            if mark_untrainable:
                info = await collector.env_info(ENV)
                seats = [s.model_copy(update={"trainable": s.name not in mark_untrainable}) for s in info.seats]
                collector._envs[ENV] = info.model_copy(update={"seats": seats})
            groups = await collector.collect(ENV, tasks, n)
            again = await collector.groups_from_server([[(r.episode_id, r.seat) for r in g.rollouts] for g in groups])
            assert [g.seat for g in again] == [g.seat for g in groups]
            return groups, {(r.episode_id, r.seat): r for g in again for r in g.rollouts}

    groups, rebuilt = asyncio.run(main())
    return groups, rebuilt, gen


def model_text(rollout, tokenizer) -> str:
    return tokenizer.decode([t for t, k in zip(rollout.completion_ids, rollout.env_mask) if k == 1], skip_special_tokens=False)


def env_text(rollout, tokenizer) -> str:
    return tokenizer.decode([t for t, k in zip(rollout.completion_ids, rollout.env_mask) if k == 0], skip_special_tokens=False)


def shown_between_moves(rollout) -> list[str]:
    """What the seat was shown after its first move and before its last: the environment's
    replies its tokens hold under mask 0 (the other seat's moves, its own invalid moves)."""
    roles = [m["role"] for m in rollout.messages]
    first, last = roles.index("assistant"), len(roles) - 1 - roles[::-1].index("assistant")
    return [m["content"] for m in rollout.messages[first:last] if m["role"] == "user"]


def test_self_play_keeps_each_seats_trajectory_apart(server, seat_model, seat_tokenizer):
    tasks = [TaskRef(index=0, seed=21), TaskRef(index=1, seed=22)]
    groups, rebuilt, gen = collect(server, seat_model, seat_tokenizer, tasks, 3)
    # One group per task and seat, x before o, each of the task's three episodes.
    assert [(g.task, g.seat) for g in groups] == [(tasks[0], "x"), (tasks[0], "o"), (tasks[1], "x"), (tasks[1], "o")]
    for xg, og in (groups[0:2], groups[2:4]):
        assert [r.episode_id for r in xg.rollouts] == [r.episode_id for r in og.rollouts]
        assert len({r.episode_id for r in xg.rollouts}) == 3
    rollouts = [r for g in groups for r in g.rollouts]
    ok = {seat: [r for r in rollouts if r.seat == seat and r.ok] for seat in ("x", "o")}
    assert ok["x"] and ok["o"], [r.error for r in rollouts]

    with Client(server.url) as gym:
        for g in groups:
            assert all(r.seat == g.seat for r in g.rollouts)
            for r in g.rollouts:
                if not r.ok:
                    continue
                # The seat's own tokens: every model span is a call the one generator answered
                # for this seat's exact token prefix, with its logprobs; the rest is mask 0.
                check_provenance(r, gen, seat_tokenizer, seat_model)
                assert r.turns == len(r.turn_spans) >= 1
                prompt = seat_tokenizer.decode(r.prompt_ids, skip_special_tokens=False)
                mark = "X" if r.seat == "x" else "O"
                assert f"tic-tac-toe as {mark}" in prompt
                # What the model wrote as this seat is exactly its assistant messages; the other
                # seat's moves reach it only as the environment's words.
                own = [m["content"] for m in r.messages if m["role"] == "assistant"]
                assert len(own) == r.turns
                text = model_text(r, seat_tokenizer)
                assert all(m in text for m in own)
                between = shown_between_moves(r)
                assert len(between) >= r.turns - 1
                assert all(f"<|im_start|>user\n{text}<|im_end|>\n" in env_text(r, seat_tokenizer) for text in between)
                # Rewards are the seat's own, as the server scored them.
                seat_score = gym.episode(r.episode_id, seat=r.seat).score.seats[r.seat]
                assert r.reward == seat_score.reward and r.metrics == seat_score.metrics
                assert r.components == {c.name: c.score for c in seat_score.components}
                # The server kept the seat's trajectory: rebuilt from its view, the same tokens.
                again = rebuilt[(r.episode_id, r.seat)]
                assert again.error is None, again.error
                assert (again.prompt_ids, again.completion_ids, again.env_mask, again.turn_spans) == (r.prompt_ids, r.completion_ids, r.env_mask, r.turn_spans)
                assert again.logprobs == pytest.approx(r.logprobs) and again.reward == r.reward
                assert again.advantage == pytest.approx(r.advantage)
            okg = [r for r in g.rollouts if r.ok]
            assert abs(sum(r.advantage for r in okg)) < 1e-6
            assert all(r.advantage == 0.0 for r in g.rollouts if not r.ok)
        # The two seats of one episode: x and o rewards are the game's two sides.
        for xr, o_r in zip(groups[0].rollouts, groups[1].rollouts):
            if xr.ok and o_r.ok and xr.stop_reason == "game_over":
                assert xr.metrics["win"] == o_r.metrics["loss"] and xr.metrics["draw"] == o_r.metrics["draw"]

    # A seat the environment marks untrainable is still played by the model, but trains nothing.
    groups, _, gen = collect(server, seat_model, seat_tokenizer, [TaskRef(index=2, seed=23)], 2, mark_untrainable=("o",))
    assert [g.seat for g in groups] == ["x"]
    played_o = [p for p, _ in gen.calls if "tic-tac-toe as O" in seat_tokenizer.decode(p)]
    assert played_o, "the model did not play o"


def test_self_play_grpo_trains_both_seats_with_one_policy(server, seat_model_dir, seat_model, seat_tokenizer, tmp_path):
    config = GRPOConfig(
        model=str(seat_model_dir),
        server_url=server.url,
        env_id=ENV,
        backend="transformers",
        num_generations=2,
        tasks_per_step=2,
        max_steps=3,
        max_tokens=12,
        max_seq_len=1000,
        learning_rate=1e-3,
        warmup_steps=0,
        num_batches_ahead=0,
        output_dir=str(tmp_path / "run"),
        save_steps=0,
        progress="none",
        seed=3,
    )
    # One generator over the trained model itself: every client seat is sampled from the one policy.
    gen = OnePolicy(TransformersGenerator(seat_model, seat_tokenizer))
    trainer = GRPOTrainer(config, model=seat_model, tokenizer=seat_tokenizer, generator=gen)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trained: list[list] = []
    train_on = trainer.train_on

    def recording(rollouts):
        trained.append(list(rollouts))
        return train_on(rollouts)

    trainer.train_on = recording
    history = trainer.train()

    assert [h["step"] for h in history] == [1, 2, 3]
    assert len(trained) == 3, [h.get("first_error") for h in history]
    for h, batch in zip(history, trained):
        assert math.isfinite(h["loss"]) and math.isfinite(h["grad_norm"])
        assert {r.seat for r in batch} <= {"x", "o"}
        assert h["seat/x/rollouts"] == 4 and h["seat/o/rollouts"] == 4
        for r in batch:
            # The loss mask is the seat's own sampled tokens: exactly its turn spans.
            spans = [0] * len(r.completion_ids)
            for start, end in r.turn_spans:
                spans[start:end] = [1] * (end - start)
            assert r.env_mask == spans and sum(r.env_mask) > 0
        ok_x = [r for r in batch if r.seat == "x"]
        assert h["seat/x/reward_mean"] == pytest.approx(sum(r.reward for r in ok_x) / len(ok_x))
    assert {r.seat for batch in trained for r in batch} == {"x", "o"}, "both seats' trajectories were not trained on"
    # Both seats' moves came from the one generator (and so the one model being trained).
    prompts = [seat_tokenizer.decode(p) for p, _ in gen.calls]
    assert any("tic-tac-toe as X" in p for p in prompts) and any("tic-tac-toe as O" in p for p in prompts)
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before), "three optimizer steps changed no weight"


def test_against_minimax_only_the_client_seat_trains(server, seat_model_dir, seat_model, seat_tokenizer, tmp_path):
    groups, rebuilt, gen = collect(server, seat_model, seat_tokenizer, [TaskRef(index=0, seed=31)], 2, seats={"o": "minimax"})
    assert [g.seat for g in groups] == ["x"]
    rollouts = groups[0].rollouts
    assert all(r.seat == "x" for r in rollouts) and any(r.ok for r in rollouts), [r.error for r in rollouts]
    assert all("tic-tac-toe as X" in seat_tokenizer.decode(p) for p, _ in gen.calls), "the model was asked to play o"
    with Client(server.url) as gym:
        for r in rollouts:
            if not r.ok:
                continue
            view = gym.episode(r.episode_id, seat="x")
            assert view.seats == {"x": "client", "o": "minimax"}
            assert r.reward == view.score.seats["x"].reward
            # minimax's moves are the environment's text in x's trajectory, under mask 0.
            between = shown_between_moves(r)
            assert all(f"<|im_start|>user\n{text}<|im_end|>\n" in env_text(r, seat_tokenizer) for text in between)
            assert "O played" not in model_text(r, seat_tokenizer)
            if any("O played" in t for t in between):
                assert "O played" in env_text(r, seat_tokenizer)
            assert rebuilt[(r.episode_id, "x")].completion_ids == r.completion_ids

    config = GRPOConfig(
        model=str(seat_model_dir),
        server_url=server.url,
        env_id=ENV,
        seats={"o": "minimax"},
        backend="transformers",
        num_generations=2,
        tasks_per_step=2,
        max_steps=2,
        max_tokens=12,
        max_seq_len=1000,
        learning_rate=1e-3,
        warmup_steps=0,
        num_batches_ahead=0,
        output_dir=str(tmp_path / "run"),
        save_steps=0,
        progress="none",
    )
    trainer = GRPOTrainer(config, model=seat_model, tokenizer=seat_tokenizer)
    trained: list = []
    train_on = trainer.train_on
    trainer.train_on = lambda rs: (trained.extend(rs), train_on(rs))[1]
    history = trainer.train()
    assert [h["step"] for h in history] == [1, 2]
    assert trained and {r.seat for r in trained} == {"x"}
    assert all("seat/o/rollouts" not in h and h["seat/x/rollouts"] == 4 for h in history)

"""Long-horizon rollouts against the real server with the in-process tiny model: every step
carries its sampled tokens, a rollout is rebuilt from the server token for token, groups of
forks share a mid-episode prefix, and a template change fails a rollout instead of training
on it."""

from __future__ import annotations

import asyncio

import pytest
import torch

from edgegym import AsyncClient, Client
from edgegym.models import message_dict
from edgegym.rollouts import (
    CollectorSettings,
    RolloutCollector,
    SamplingParams,
    TaskRef,
    TrajectoryUnavailable,
    TransformersGenerator,
    template_hash,
)
from test_rollouts import RecordingGenerator, check_provenance

SETTINGS = dict(sampling=SamplingParams(max_tokens=6), max_seq_len=400)


def run(server, model, tokenizer, work, *, gen=None, **settings):
    gen = gen or RecordingGenerator(TransformersGenerator(model, tokenizer))

    async def main():
        async with AsyncClient(server.url) as gym:
            collector = RolloutCollector(gym, gen, tokenizer, CollectorSettings(**{**SETTINGS, **settings}))
            return await work(collector)

    return asyncio.run(main()), gen


def same_tokens(a, b):
    assert a.prompt_ids == b.prompt_ids
    assert a.completion_ids == b.completion_ids
    assert a.env_mask == b.env_mask
    assert a.turn_spans == b.turn_spans
    assert a.logprobs == pytest.approx(b.logprobs, abs=1e-6)  # float32 through JSON
    assert (a.turns, a.reward, a.completion_truncated) == (b.turns, b.reward, b.completion_truncated)
    assert [message_dict(m) for m in a.messages] == [message_dict(m) for m in b.messages]


@pytest.mark.parametrize("env_id,max_tokens", [("guess-number", 6), ("calculator", 40)])
def test_steps_carry_sampled_tokens_and_rollouts_rebuild_from_the_server(server, warm_model, tokenizer, env_id, max_tokens):
    torch.manual_seed(1)

    async def work(collector):
        groups = await collector.collect(env_id, [TaskRef(index=21, seed=2), TaskRef(index=22, seed=3)], 2)
        batch = await collector.groups_from_server([[r.episode_id for r in g.rollouts] for g in groups])
        return collector.template_hash, groups, [r for g in batch for r in g.rollouts]

    (digest, groups, rebuilt), gen = run(server, warm_model, tokenizer, work, sampling=SamplingParams(max_tokens=max_tokens))
    assert digest == template_hash(tokenizer) and digest.startswith("sha256:")
    rollouts = [r for g in groups for r in g.rollouts]
    assert any(r.turns > 1 for r in rollouts), "no rollout took more than one turn"
    with Client(server.url) as gym:
        for r, again in zip(rollouts, rebuilt):
            check_provenance(r, gen, tokenizer, warm_model)
            stored = gym.episode(r.episode_id)
            assert stored.status == "closed" and stored.template_changes == []
            sent = [t.sampled for t in stored.turns[1:]]
            assert [s.token_ids for s in sent] == [r.completion_ids[a:b] for a, b in r.turn_spans]
            assert all(s.template_hash == digest for s in sent)
            assert [s.logprobs for s in sent] == [pytest.approx(r.logprobs[a:b], abs=1e-6) for a, b in r.turn_spans]
            assert again.error is None, again.error
            same_tokens(again, r)
            assert (again.env_id, again.index, again.seed, again.parent_episode_id) == (env_id, r.index, r.seed, None)
            assert again.advantage == pytest.approx(r.advantage)  # the batch's advantages, rebuilt


def test_without_sampled_tokens_nothing_is_stored_and_nothing_rebuilds(server, warm_model, tokenizer):
    async def work(collector):
        groups = await collector.collect("guess-number", [TaskRef(index=23, seed=4)], 1)
        r = groups[0].rollouts[0]
        return r, await collector.rollout_from_server(r.episode_id)

    (r, again), _ = run(server, warm_model, tokenizer, work, send_sampled=False)
    assert r.ok
    with Client(server.url) as gym:
        assert all(t.sampled is None for t in gym.episode(r.episode_id).turns)
    assert not again.ok and "turn 1 carries no sampled tokens" in again.error


def test_group_from_forks_of_a_mid_episode_state(server, warm_model, tokenizer):
    torch.manual_seed(2)
    tasks = [TaskRef(index=30 + i, seed=i) for i in range(4)]

    async def work(collector):
        groups = await asyncio.gather(*(collector.collect_forks("guess-number", t, 1, 4) for t in tasks))
        formed = [g for g in groups if not g.failed]
        batch = await collector.groups_from_server([[r.episode_id for r in g.rollouts] for g in formed])
        assert [(g.parent_episode_id, g.fork_turn) for g in batch] == [(g.parent_episode_id, g.fork_turn) for g in formed]
        return groups, [r for g in batch for r in g.rollouts]

    (groups, rebuilt), gen = run(server, warm_model, tokenizer, work)
    formed = [g for g in groups if not g.failed]
    for g in groups:
        if g.failed:  # the trunk guessed right at turn 1: there is no mid-episode state to fork
            assert all("ended at turn 1, done (solved): no state to fork after turn 1" in r.error for r in g.rollouts), [r.error for r in g.rollouts]
    assert formed, "every trunk ended before the fork turn"
    with Client(server.url) as gym:
        for g in formed:
            assert g.fork_turn == 1 and len(g.rollouts) == 4
            parent = gym.episode(g.parent_episode_id)
            assert parent.status == "closed" and parent.turn == 1 and parent.score is None  # the trunk is not scored
            prefix = g.rollouts[0].prompt_ids
            assert len({r.episode_id for r in g.rollouts}) == 4
            for r in g.rollouts:
                check_provenance(r, gen, tokenizer, warm_model)
                assert (r.parent_episode_id, r.fork_turn) == (g.parent_episode_id, 1)
                # One shared prefix: the trunk's prompt, its first guess, the feedback and the next generation prompt.
                assert r.prompt_ids == prefix
                stored = gym.episode(r.episode_id)
                assert stored.parent.episode_id == g.parent_episode_id and stored.messages[: len(parent.messages)] == parent.messages
                assert stored.turn == 1 + r.turns and [message_dict(m) for m in r.messages] == [message_dict(m) for m in stored.messages]
            text = tokenizer.decode(prefix, skip_special_tokens=False)
            assert text.endswith("<|im_start|>assistant\n") and text.count("<|im_start|>assistant\n") == 2
            assert parent.messages[-1].content in ("Higher.", "Lower.", "That is not a number. Guess again.")
            assert f"<|im_start|>user\n{parent.messages[-1].content}<|im_end|>" in text
            # Advantages compare the forks with each other only.
            assert abs(sum(r.advantage for r in g.rollouts)) < 1e-6
            passes = sum(r.reward >= 0.5 for r in g.rollouts)
            assert g.pass_at_k(1) == pytest.approx(passes / 4) and g.pass_at_k(4) == (1.0 if passes else 0.0)
    rollouts = [r for g in formed for r in g.rollouts]
    for r, again in zip(rollouts, rebuilt):
        assert again.error is None, again.error
        same_tokens(again, r)
        assert (again.parent_episode_id, again.fork_turn) == (r.parent_episode_id, 1)
        assert again.advantage == pytest.approx(r.advantage)


def _unsolved_episode(gym, index, seed, tokens=None, template="x"):
    """An episode of guess-number stepped once with a wrong guess (by a client, not the collector)."""
    ep = gym.reset("guess-number", index=index, seed=seed)
    secret = int(gym.examples("guess-number", offset=index, limit=1).examples[0].answer or 0)
    sampled = None if tokens is None else {"token_ids": tokens, "logprobs": [-1.0] * len(tokens), "template_hash": template}
    reply = gym.step(ep.episode_id, 0, {"role": "assistant", "content": str(1 if secret != 1 else 2)}, sampled)
    assert not reply.done
    return ep.episode_id


def test_fork_group_from_an_existing_episode(server, warm_model, tokenizer):
    with Client(server.url) as gym:
        plain = _unsolved_episode(gym, 40, 1)  # stepped without sampled tokens
        foreign = _unsolved_episode(gym, 41, 1, tokens=[5, 6], template="sha256:another-tokenizer")

    async def work(collector):
        group = await collector.fork_group(plain, 3, idempotency_key="fork-existing-1")
        with pytest.raises(TrajectoryUnavailable, match="another template"):
            await collector.fork_group(foreign, 2)
        rebuilt = await collector.rollout_from_server(group.rollouts[0].episode_id)
        return group, rebuilt

    (group, rebuilt), gen = run(server, warm_model, tokenizer, work)
    assert group.parent_episode_id == plain and group.fork_turn == 1 and group.task.index == 40
    with Client(server.url) as gym:
        history = [m.model_dump(exclude_none=True) for m in gym.episode(plain).messages]
    from edgegym.rollouts import ChatTokens

    # No stored tokens for the prefix: it is the template's rendering of its messages (context only).
    assert group.rollouts[0].prompt_ids == ChatTokens(tokenizer).prompt_ids(history)
    for r in group.rollouts:
        check_provenance(r, gen, tokenizer, warm_model)
    # The forks' own tokens were sent, but the prefix's were not: the rollout cannot be rebuilt.
    assert not rebuilt.ok and "turn 1 carries no sampled tokens" in rebuilt.error


class TemplateSwap:
    """The real generator; after ``after`` calls the collector's template hash changes, the
    way it would if a trainer switched tokenizer or chat template mid-run."""

    def __init__(self, inner, after):
        self.inner, self.after, self.calls, self.collector = inner, after, 0, None

    async def generate(self, prompt_ids, sampling):
        self.calls += 1
        if self.calls > self.after:
            self.collector.template_hash = "sha256:a-new-template"
        return await self.inner.generate(prompt_ids, sampling)


def test_a_template_change_fails_the_rollout_instead_of_training_on_it(server, warm_model, tokenizer):
    torch.manual_seed(3)
    swap = TemplateSwap(TransformersGenerator(warm_model, tokenizer), after=1)

    async def work(collector):
        swap.collector = collector
        group = await collector.collect_forks("guess-number", TaskRef(index=50, seed=5), 1, 2)
        rebuilt = await collector.rollout_from_server(group.rollouts[0].episode_id) if group.rollouts[0].episode_id else None
        return group, rebuilt

    (group, rebuilt), _ = run(server, warm_model, tokenizer, work, gen=swap)
    if any("no state to fork" in (r.error or "") for r in group.rollouts):
        pytest.skip("the trunk guessed right at turn 1")
    assert group.failed == group.rollouts and all(r.advantage == 0.0 for r in group.rollouts)
    for r in group.rollouts:
        assert r.error.startswith("TemplateChanged: template_changed") and "turn 2" in r.error, r.error
    with Client(server.url) as gym:
        stored = gym.episode(group.rollouts[0].episode_id)
    assert [(c.turn, c.to) for c in stored.template_changes] == [(2, "sha256:a-new-template")]
    assert not rebuilt.ok


def test_fork_arguments_the_server_would_refuse_spend_nothing(tokenizer):
    async def main():
        async with AsyncClient("http://127.0.0.1:9") as gym:  # never reached
            collector = RolloutCollector(gym, RecordingGenerator(None), tokenizer)
            for n, turn in ((0, 1), (65, 1), (10**9, 1), (2, -1)):
                with pytest.raises(ValueError):
                    await collector.collect_forks("guess-number", TaskRef(index=1, seed=1), turn, n)
                with pytest.raises(ValueError):
                    await collector.fork_group("ep_x", n, turn=turn)

    asyncio.run(main())


def test_pass_at_k_of_a_group():
    from math import comb

    from edgegym.rollouts import Rollout, RolloutGroup

    task = TaskRef(index=0, seed=0)
    rewards = [1.0, 0.0, 0.0, 0.7, 0.2, None]
    group = RolloutGroup(task, [Rollout("e", task, reward=x, error=None if x is not None else "boom") for x in rewards])
    n, c = 5, 2  # the failed rollout is not a sample
    for k in range(1, 6):
        assert group.pass_at_k(k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))
    assert group.pass_at_k(6) is None and group.pass_at_k(1, threshold=0.9) == pytest.approx(1 / 5)
    with pytest.raises(ValueError):
        group.pass_at_k(0)

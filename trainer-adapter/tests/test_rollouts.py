"""Rollouts against the real server with an in-process tiny model: token ids, logprobs and env
masks checked on multi-turn and tool episodes."""

from __future__ import annotations

import asyncio
import json

import pytest
import torch

from edgegym import AsyncClient
from edgegym.grpo.batching import collate, token_logps
from edgegym.rollouts import (
    ChatTokens,
    CollectorSettings,
    HermesToolCallParser,
    RolloutCollector,
    SamplingParams,
    TaskRef,
    TemplateError,
    TransformersGenerator,
)


class RecordingGenerator:
    """Passes every request to the real generator and keeps the prompts it was given."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[tuple[list[int], object]] = []

    async def generate(self, prompt_ids, sampling):
        result = await self.inner.generate(prompt_ids, sampling)
        self.calls.append((list(prompt_ids), result))
        return result


def collect(server, model, tokenizer, env_id, tasks, n, max_tokens=40):
    gen = RecordingGenerator(TransformersGenerator(model, tokenizer))

    async def main():
        async with AsyncClient(server.url) as gym:
            collector = RolloutCollector(gym, gen, tokenizer, CollectorSettings(sampling=SamplingParams(max_tokens=max_tokens), max_seq_len=400))
            return await collector.collect(env_id, tasks, n)

    return asyncio.run(main()), gen


def check_provenance(rollout, gen, tokenizer, model, atol=2e-4):
    assert rollout.error is None, rollout.error
    n = len(rollout.completion_ids)
    assert len(rollout.logprobs) == n and len(rollout.env_mask) == n
    # Model spans are exactly the generator's tokens; everything else is environment (mask 0).
    mask_from_spans = [0] * n
    for start, end in rollout.turn_spans:
        mask_from_spans[start:end] = [1] * (end - start)
    assert rollout.env_mask == mask_from_spans
    assert rollout.env_mask[-1] == 1  # the completion ends on the model's last token
    # Each turn's prompt was the previous tokens unchanged: nothing was re-tokenised.
    mine = [(p, r) for p, r in gen.calls if p[: len(rollout.prompt_ids)] == rollout.prompt_ids]
    full = rollout.prompt_ids + rollout.completion_ids
    matched = 0
    for start, end in rollout.turn_spans:
        prefix = rollout.prompt_ids + rollout.completion_ids[:start]
        hits = [r for p, r in mine if p == prefix and r.completion_ids == full[len(prefix) : len(prefix) + end - start]]
        assert hits, "a turn's prompt is not the exact token prefix before it"
        # (two group members can sample the same tokens in different batches: equal up to float noise)
        assert rollout.logprobs[start:end] == pytest.approx(hits[0].logprobs, abs=1e-4)
        matched += 1
    assert matched == rollout.turns or rollout.stop_reason == "context_limit"
    # The sampling logprobs are the model's own (temperature 1): recomputing them in a training
    # forward pass over the padded batch gives the same numbers on model tokens.
    batch = collate([rollout], tokenizer.pad_token_id)
    with torch.no_grad():
        trainer_logps = token_logps(model, batch, 1.0)[0]
    model_pos = torch.tensor(rollout.env_mask, dtype=torch.bool)
    sampled = torch.tensor(rollout.logprobs)
    assert torch.allclose(trainer_logps[model_pos], sampled[model_pos], atol=atol), (trainer_logps[model_pos] - sampled[model_pos]).abs().max()


def test_multi_turn_episode_tokens(server, warm_model, tokenizer):
    groups, gen = collect(server, warm_model, tokenizer, "guess-number", [TaskRef(index=11, seed=5), TaskRef(index=12, seed=6)], 3, max_tokens=6)
    rollouts = [r for g in groups for r in g.rollouts]
    multi = [r for r in rollouts if r.turns > 1]
    assert multi, "no rollout took more than one turn"
    for r in rollouts:
        check_provenance(r, gen, tokenizer, warm_model)
    for r in multi:
        # Between turns the environment's feedback is in the tokens with mask 0, exactly as the template renders it.
        env_text = tokenizer.decode([t for t, m in zip(r.completion_ids, r.env_mask) if m == 0], skip_special_tokens=False)
        feedback = [m["content"] for m in r.messages if m["role"] == "user"][1:]
        for text in feedback[: r.turns - 1]:
            assert f"<|im_start|>user\n{text}<|im_end|>\n" in env_text
        assert env_text.count("<|im_start|>assistant\n") == r.turns - 1
    # Group members share the task; advantages are centred per group.
    for g in groups:
        assert len({(r.index, r.seed) for r in g.rollouts}) == 1
        assert abs(sum(r.advantage for r in g.rollouts)) < 1e-6


def test_tool_episode_tokens(server, warm_model, tokenizer):
    groups, gen = collect(server, warm_model, tokenizer, "calculator", [TaskRef(index=i, seed=i) for i in range(3)], 2, max_tokens=40)
    rollouts = [r for g in groups for r in g.rollouts]
    with_tools = [r for r in rollouts if any(m["role"] == "tool" for m in r.messages)]
    assert with_tools, "the warmed-up model made no tool call"
    for r in rollouts:
        check_provenance(r, gen, tokenizer, warm_model)
    for r in with_tools:
        call = next(m for m in r.messages if m["role"] == "assistant" and m.get("tool_calls"))
        result = next(m for m in r.messages if m["role"] == "tool")
        # The tiny model samples its arguments: a well-formed call gets the sum (or an error for
        # non-integers), a malformed one (bad JSON, a missing "b") gets the tool's error text.
        try:
            args = json.loads(call["tool_calls"][0]["function"]["arguments"])
        except ValueError:
            args = None

        def integer(v):  # as zod's z.number().int() reads a JSON value: 3 and 3.0, not true
            return isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()

        named_add = call["tool_calls"][0]["function"].get("name") == "add"
        if named_add and isinstance(args, dict) and integer(args.get("a")) and integer(args.get("b")):
            assert result["content"] == str(int(args["a"]) + int(args["b"]))
        else:
            assert result["content"].startswith("Error")
        env_text = tokenizer.decode([t for t, m in zip(r.completion_ids, r.env_mask) if m == 0], skip_special_tokens=False)
        assert f"<|im_start|>tool\n{result['content']}<|im_end|>\n" in env_text
        assert r.metrics["tool_calls"] >= 1
    assert any(r.turns >= 2 for r in with_tools)


def test_failed_rollout_is_reported(server, warm_model, tokenizer):
    groups, _ = collect(server, warm_model, tokenizer, "reverse-text", [TaskRef(index=999_999, seed=1)], 2)
    assert [r.ok for r in groups[0].rollouts] == [False, False]
    assert all("task_out_of_range" in r.error for r in groups[0].rollouts)
    assert groups[0].failed == groups[0].rollouts


def test_template_delta_refuses_templates_that_rewrite_history(tokenizer):
    # A template that drops earlier assistant turns (as some reasoning templates drop <think>) is not append-only.
    class Rewriting:
        def __init__(self, tok):
            self.tok = tok

        def apply_chat_template(self, messages, **kw):
            last_user = max(i for i, m in enumerate(messages) if m["role"] != "assistant")
            kept = [m for i, m in enumerate(messages) if m["role"] != "assistant" or i > last_user]
            return self.tok.apply_chat_template(kept, **kw)

        def __call__(self, text, **kw):
            return self.tok(text, **kw)

        def decode(self, ids, **kw):
            return self.tok.decode(ids, **kw)

    chat = ChatTokens(Rewriting(tokenizer))
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "5"}]
    with pytest.raises(TemplateError):
        chat.env_delta_ids(history, [{"role": "user", "content": "Higher."}], [1, tokenizer.eos_token_id], True)


def test_template_delta_when_max_tokens_cut_the_turn(tokenizer):
    chat = ChatTokens(tokenizer)
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "5"}]
    env = [{"role": "user", "content": "Higher."}]
    stopped = tokenizer.decode(chat.env_delta_ids(history, env, [tokenizer.eos_token_id], True), skip_special_tokens=False)
    cut = tokenizer.decode(chat.env_delta_ids(history, env, [5], False), skip_special_tokens=False)
    assert stopped == "\n<|im_start|>user\nHigher.<|im_end|>\n<|im_start|>assistant\n"
    assert cut == "<|im_end|>" + stopped  # the end-of-turn the model did not write is environment text


def test_hermes_tool_call_parser():
    p = HermesToolCallParser()
    msg = p.parse('Let me add. <tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>', turn=3)
    assert msg["content"] == "Let me add."
    assert msg["tool_calls"] == [{"id": "call_3_0", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}]
    assert p.parse("<tool_call>{not json}</tool_call>", 0) == {"role": "assistant", "content": "<tool_call>{not json}</tool_call>"}
    only = p.parse('<tool_call>{"name": "add", "arguments": {}}</tool_call>', 0)
    assert only["content"] is None and len(only["tool_calls"]) == 1

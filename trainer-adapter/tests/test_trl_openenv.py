"""TRL's OpenEnv integration against edgegym's OpenEnv wire (/openenv/{env_id}).

TRL 1.16 drives OpenEnv environments through ``GRPOTrainer(environment_factory=...)``:
classes whose ``reset`` starts an episode and whose public methods are tools. The classes,
reward function and dataset helper are docs/openenv.md's "TRL (OpenEnv integration)"
code, run as printed (only the server address is swapped in); each instance is an
openenv-core ``GenericEnvClient`` session. The trainer is TRL's real GRPOTrainer on the CPU
with a tiny model built here; what the rollouts did is then read back from the server.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path
from typing import Any

import pytest

trl = pytest.importorskip("trl")

from support.trl_args import tiny_trl_args  # noqa: E402
# Required, not skipped: openenv-core is in the test extras (pyproject.toml, pinned in constraints.txt).
from openenv.core.generic_client import GenericEnvClient  # noqa: E402,F401

DOC = Path(__file__).resolve().parents[2] / "docs" / "openenv.md"
DOC_SERVER = "http://localhost:8787"


def doc_blocks() -> list[str]:
    """The TRL section's Python blocks, each starting with a ``# TRL:`` line."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    return [b for b in blocks if b.startswith("# TRL:")]


@pytest.fixture(scope="module")
def doc(server) -> dict[str, Any]:
    """The first block, executed as printed against the test server."""
    blocks = doc_blocks()
    assert len(blocks) == 2 and DOC_SERVER in blocks[0]
    namespace: dict[str, Any] = {"__name__": "edgegym_trl_openenv_doc"}
    exec(compile(blocks[0].replace(DOC_SERVER, server.url), str(DOC), "exec"), namespace)  # noqa: S102 - our own docs
    return namespace


@pytest.fixture(scope="module")
def guess_number_class(doc):
    """guess-number (three turns at most, from tests/support/test_envs.mjs) in the docs'
    pattern: the docs' base class, with the game's move as a tool."""

    class GuessNumber(doc["EdgegymEpisode"]):
        """Multi-turn: each guess is a tool call, and the environment's answer its result."""

        env_id = "guess-number"

        def guess(self, number: int) -> str:
            """Guess the secret number.

            Args:
                number: A number from 1 to 9.
            """
            if self.done:
                raise ValueError("Game over.")
            return self._play(str(number))

    return GuessNumber


def test_the_docs_trainer_block_uses_only_what_the_first_block_defines(doc):
    """The second block (the trainer on a GPU model) is not run here, the test below runs
    its call with a tiny model; every name it reads is TRL's or the first block's."""
    import ast
    import builtins

    tree = ast.parse(doc_blocks()[1])
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assigned = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    assert imported == {"GRPOConfig", "GRPOTrainer"}
    assert read - imported - assigned - set(dir(builtins)) == {"edgegym_reward", "train_dataset", "ReverseText", "Wordle"}
    assert all(name in doc for name in ("edgegym_reward", "train_dataset", "ReverseText", "Wordle"))


def close_all(envs) -> None:
    for env in envs:
        env.client.close()


def test_the_docs_wordle_class_plays_a_whole_episode_scored_by_edgegym(server, doc):
    from transformers.utils import get_json_schema

    from edgegym import Client

    rows = doc["tasks"]("wordle", 2)
    assert [r["index"] for r in rows] == [0, 1] and rows[0]["environment"] == "wordle"
    # The docs' module built its dataset too: the two environments' rows alternate.
    assert doc["train_dataset"][0]["environment"] == "reverse-text" and doc["train_dataset"][1]["environment"] == "wordle"
    env = doc["Wordle"]()
    try:
        schema = get_json_schema(env.guess)["function"]
        assert schema["name"] == "guess" and schema["parameters"]["required"] == ["word"]
        row = {k: v for k, v in rows[1].items() if k != "environment"}  # what TRL passes to reset
        assert env.reset(**row) is None
        with Client(server.url) as gym:
            secret = gym.examples("wordle", offset=1, limit=1).examples[0].answer
        words = [w for w in ("crane", "slate", "pride", "tough", "mount", "house") if w != secret][:5]
        replies = [env.guess(word) for word in words[:2]] + [env.guess("zzzzz")] + [env.guess(word) for word in words[2:4]]
        assert not env.done and env.reward == 0.0
        valid = re.compile(r"Guess \d/6: [A-Z ]+\nFeedback:  [GY -]+\nGuesses left: \d\.")
        assert all(valid.fullmatch(r) for i, r in enumerate(replies) if i != 2), replies
        assert replies[2] == 'Guess 3/6 is invalid: "zzzzz" is not in the word list.\nGuesses left: 3.'
        # The sixth guess is the rollout's closing message: the reward function plays it.
        completion = [{"role": "assistant", "content": f"<guess>{words[4]}</guess>"}]
        rewards = doc["edgegym_reward"]([completion], environments=[env])
        assert env.done
        with pytest.raises(ValueError, match="Game over"):
            env.guess("crane")
        with Client(server.url) as gym:
            episode = gym.episode(env.episode_id)
        assert episode.env_id == "wordle" and episode.index == 1 and episode.turn == 6 and episode.done
        assert episode.stop_reason == "out_of_guesses" and f"The word was {secret.upper()}." in episode.messages[-1].content
        assert episode.score is not None and rewards == [episode.score.reward] and rewards[0] > 0  # partial and format credit
        said = [m.content for m in episode.messages if m.role == "assistant"]
        assert said == [f"<guess>{w}</guess>" for w in words[:2] + ["zzzzz"] + words[2:5]]
        # A row from another environment's task list is refused, not played.
        with pytest.raises(ValueError, match="rebuild the dataset"):
            env.reset(index=0, prompt=doc["tasks"]("reverse-text", 1)[0]["prompt"])
    finally:
        env.client.close()


@pytest.fixture(scope="module")
def openenv_model_dir(server, tokenizer, guess_number_class, tmp_path_factory):
    """A tiny model warmed up to play guess-number with two ``guess`` tool calls then a
    last plain guess, on prompts that list the tool the way TRL renders it. (It is not
    taught reverse-text, whose long prompts would cost most of the test's CPU time: its
    answers score near 0, as the server's rubric says.)"""
    from transformers.utils import get_json_schema

    from edgegym import Client
    from support.tiny_model import build_model, tool_call_text, transcript_ids, warm_up

    rng = random.Random(1)
    tools = [get_json_schema(guess_number_class().guess)]
    examples = []
    with Client(server.url) as gym:
        for ex in gym.examples("guess-number", limit=24).examples:
            prompt = [m.model_dump(exclude_none=True) for m in ex.prompt]
            g1, g2, g3 = (rng.randint(1, 9) for _ in range(3))
            msgs = prompt + [
                {"role": "assistant", "content": tool_call_text("guess", {"number": g1})},
                {"role": "tool", "name": "guess", "content": rng.choice(["Higher.", "Lower."])},
                {"role": "assistant", "content": tool_call_text("guess", {"number": g2})},
                {"role": "tool", "name": "guess", "content": rng.choice(["Higher.", "Lower."])},
                {"role": "assistant", "content": str(g3)},
            ]
            examples.append(transcript_ids(tokenizer, msgs, tools))
    model = build_model(tokenizer)
    warm_up(model, examples, steps=150, batch=8)
    out = tmp_path_factory.mktemp("trl-openenv-model")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def test_trl_grpo_trainer_plays_edgegym_over_openenv(server, doc, guess_number_class, openenv_model_dir, tokenizer, tmp_path):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOTrainer
    from trl.chat_template_utils import qwen3_template

    from edgegym import Client

    # The test tokenizer writes Hermes-style tool calls in ChatML, Qwen's layout, so TRL's
    # parser for Qwen's template reads them.
    tokenizer.response_template = qwen3_template
    # Every reward TRL asked for, with the episode it came from.
    seen: list[tuple[str, float]] = []

    def edgegym_reward(completions, environments, **kwargs):
        rewards = doc["edgegym_reward"](completions, environments, **kwargs)
        seen.extend((env.episode_id, reward) for env, reward in zip(environments, rewards, strict=True))
        return rewards

    # The docs' dataset, with guess-number for wordle; alternating rows, not shuffled, so
    # that each batch of two prompts holds one task of each.
    rows = [row for pair in zip(doc["tasks"]("reverse-text", 4), doc["tasks"]("guess-number", 4)) for row in pair]
    args = tiny_trl_args(tmp_path / "trl-openenv", num_generations=2, max_completion_length=128, max_tool_calling_iterations=2, shuffle_dataset=False)
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(openenv_model_dir),
        reward_funcs=edgegym_reward,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory={"reverse-text": doc["ReverseText"], "guess-number": guess_number_class},
    )
    pools = trainer._environment_pool
    try:
        trainer.train()
    finally:
        close_all(env for pool in pools.values() for env in pool)

    assert trainer.state.global_step == 2
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logged) == 2 and all("rewards/edgegym_reward/mean" in h for h in logged)
    # The warm model calls guess; TRL ran those calls as steps of the episodes.
    assert sum(h.get("tools/call_frequency", 0.0) for h in logged) > 0
    # Two steps of 4 rollouts: each one its own episode, each env instance one socket.
    assert len(seen) == 8 and len({episode_id for episode_id, _ in seen}) == 8
    assert {len(pool) for pool in pools.values()} == {2}

    by_env: dict[str, list[Any]] = {"reverse-text": [], "guess-number": []}
    with Client(server.url) as gym:
        for episode_id, reward in seen:
            episode = gym.episode(episode_id)
            by_env[episode.env_id].append(episode)
            assert episode.turn >= 1  # every rollout stepped its episode
            if episode.done:
                # The reward TRL trained on is the rubric's total, as the server stored it.
                assert episode.score is not None and reward == episode.score.reward
            else:
                assert episode.score is None and reward == 0.0
    assert len(by_env["reverse-text"]) == 4 and len(by_env["guess-number"]) == 4
    # Single turn: the completion was stepped as the answer and scored.
    assert all(e.done and e.turn == 1 and e.messages[-1].role == "assistant" for e in by_env["reverse-text"])
    # Multi-turn: the tool calls were moves, the environment's answers their results, and
    # the closing guess ended the game (solved, or at its three-turn limit).
    played = [e for e in by_env["guess-number"] if e.done]
    assert played and any(e.turn >= 2 for e in played)
    for episode in played:
        said = [m.content for m in episode.messages if m.role == "assistant"]
        replies = [m.content for m in episode.messages if m.role == "user"][1:]
        assert len(said) == episode.turn and all(r in ("Higher.", "Lower.", "Correct!", "That is not a number. Guess again.") for r in replies)

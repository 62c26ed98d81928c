"""TRL's environment_factory form: edgegym episodes as TRL environments whose methods are
the server's tools, checked on their own and inside TRL 1.16's real GRPOTrainer on CPU."""

from __future__ import annotations

import os

import pytest

trl = pytest.importorskip("trl")

from support.trl_args import tiny_trl_args  # noqa: E402


def _row(server_url: str, env_id: str, index: int = 0) -> dict:
    from edgegym.trl import edgegym_dataset

    return dict(edgegym_dataset(server_url, env_id, n=index + 1)[index])


def test_tools_become_methods_with_the_schema_trl_renders(server):
    from transformers.utils import get_json_schema

    from edgegym.trl import environment_factory

    env = environment_factory(server.url, "calculator")()
    schema = get_json_schema(env.add)["function"]
    assert schema["name"] == "add"
    assert schema["description"] == "Add two integers."
    assert schema["parameters"]["properties"]["a"]["type"] == "integer"
    assert schema["parameters"]["properties"]["b"]["type"] == "integer"
    assert sorted(schema["parameters"]["required"]) == ["a", "b"]


def test_tool_calls_run_on_the_server_and_the_final_answer_is_scored(server):
    from edgegym import Client
    from edgegym.trl import environment_component_reward, environment_factory, environment_reward

    env = environment_factory(server.url, "calculator")()
    row = _row(server.url, "calculator", 3)
    a, b = (int(x) for x in row["prompt"][-1]["content"].removeprefix("What is ").removesuffix("?").split(" + "))
    assert env.reset(**row) is None
    assert env.add(a=a, b=b) == str(a + b)
    # A bad call reaches the server, whose validation error comes back as the tool's result.
    bad = env.add(a="seven", b=b)
    assert "a" in bad and bad != str(a + b)
    completion = [
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": a, "b": b}}}]},
        {"role": "tool", "name": "add", "content": str(a + b)},
        {"role": "assistant", "content": f"The sum is {a + b}."},
    ]
    rewards = environment_reward([completion], environments=[env])
    calls = environment_component_reward("tool_calls")([completion], environments=[env])
    assert rewards == [1.0]
    assert calls == [1.0]  # the call the server refused never ran
    with Client(server.url) as gym:
        episode = gym.episode(env.episode_id)
    roles = [msg.role for msg in episode.messages]
    assert roles[-1] == "assistant" and roles.count("tool") == 2
    assert episode.done and episode.status == "closed" and episode.score is not None and episode.score.reward == rewards[0]
    # Scoring again (a second reward function over the same batch) does not step twice.
    assert environment_reward([completion], environments=[env]) == rewards
    # A reused instance starts a new episode.
    first = env.episode_id
    env.reset(**row)
    assert env.episode_id != first and env.score is None


def test_a_call_after_the_episode_ended_is_refused_without_stepping(server):
    from edgegym.trl import environment_factory

    env = environment_factory(server.url, "calculator")()
    env.reset(**_row(server.url, "calculator"))
    for _ in range(3):  # maxTurns is 3: the third tool call ends the episode
        env.add(a=1, b=1)
    assert env.done
    with pytest.raises(RuntimeError, match="episode is over"):
        env.add(a=1, b=1)


def test_multi_turn_environments_are_pointed_to_rollout_func(server):
    from edgegym.trl import environment_factory

    with pytest.raises(ValueError, match="EdgegymRolloutFunc"):
        environment_factory(server.url, "guess-number")


def test_a_row_from_elsewhere_is_refused(server):
    from edgegym.trl import environment_factory

    env = environment_factory(server.url, "calculator")()
    row = _row(server.url, "calculator")
    with pytest.raises(ValueError, match="edgegym_index"):
        env.reset(prompt=row["prompt"])
    with pytest.raises(ValueError, match="different messages"):
        env.reset(**{**row, "prompt": [{"role": "user", "content": "something else"}]})


@pytest.fixture(scope="module")
def tool_model_dir(server, tokenizer, tmp_path_factory):
    """A tiny model warmed up on calculator transcripts whose prompts list the tool the way
    TRL renders it (the schema of the environment's generated method), so that it calls
    the tool from TRL's prompts."""
    from transformers.utils import get_json_schema

    from edgegym import Client
    from edgegym.trl import environment_factory
    from support.tiny_model import build_model, tool_call_text, transcript_ids, warm_up

    tools = [get_json_schema(environment_factory(server.url, "calculator")().add)]
    examples = []
    with Client(server.url) as gym:
        for ex in gym.examples("calculator", limit=60).examples:
            a, b = ex.info["a"], ex.info["b"]
            msgs = [msg.model_dump(exclude_none=True) for msg in ex.prompt] + [
                {"role": "assistant", "content": tool_call_text("add", {"a": a, "b": b})},
                {"role": "tool", "name": "add", "content": str(a + b)},
                {"role": "assistant", "content": f"The sum is {a + b}."},
            ]
            examples.append(transcript_ids(tokenizer, msgs, tools))
    model = build_model(tokenizer)
    warm_up(model, examples, steps=200)
    out = tmp_path_factory.mktemp("trl-tool-model")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def test_trl_grpo_trainer_with_edgegym_environment_factory(server, tool_model_dir, tokenizer, tmp_path):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from transformers import AutoModelForCausalLM
    from trl import GRPOTrainer
    from trl.chat_template_utils import qwen3_template

    from edgegym import Client
    from edgegym.trl import edgegym_dataset, environment_component_reward, environment_factory, environment_reward

    # The test tokenizer writes Hermes-style tool calls in ChatML, the layout of Qwen's
    # templates, so TRL's parser for them reads its tool calls (a Qwen tokenizer gets it
    # from trl.chat_template_utils.add_response_schema).
    tokenizer.response_template = qwen3_template
    dataset = edgegym_dataset(server.url, "calculator", n=8)
    args = tiny_trl_args(tmp_path / "trl-env", max_completion_length=48, max_tool_calling_iterations=2, reward_weights=[1.0, 0.0])
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(tool_model_dir),
        reward_funcs=[environment_reward, environment_component_reward("tool_calls")],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=environment_factory(server.url, "calculator"),
    )
    trainer.train()
    assert trainer.state.global_step == 2
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logged) == 2
    assert all("rewards/environment_reward/mean" in h and "rewards/edgegym_tool_calls/mean" in h for h in logged)
    # The warm model calls the add tool; TRL ran those calls through the episodes.
    assert sum(h.get("tools/call_frequency", 0.0) for h in logged) > 0
    envs = trainer.environments
    assert len(envs) == 4 and all(e.score is not None for e in envs)
    answered_after_tool = 0
    with Client(server.url) as gym:
        for env in envs:
            episode = gym.episode(env.episode_id)
            roles = [msg.role for msg in episode.messages]
            assert roles.count("tool") == env.tool_calls
            assert episode.score is not None and episode.score.reward == env.score.reward
            answered_after_tool += roles[-2:] == ["tool", "assistant"] and episode.done
    # The model's answer after a tool result was stepped into the episode and ended it.
    assert answered_after_tool > 0

"""edgegym episodes in TRL's ``environment_factory`` form (written against TRL 1.16.0).

TRL's contract (``trl/trainer/grpo_trainer.py``, ``GRPOTrainer.__init__`` and
``_generate_and_score_completions``): ``environment_factory()`` returns an object whose
public methods are tools (type-hinted, Google-style docstrings: TRL renders their schema
with ``transformers.utils.get_json_schema``), plus ``reset(**row)`` called once per rollout
with the dataset row. TRL generates, parses tool calls with the tokenizer's response
template, calls the methods and feeds their results back, masking tool text out of the
loss. Reward functions receive the batch's instances as ``environments``.

Here ``reset`` starts an edgegym episode for the row's task, each tool method steps the
episode with an assistant message carrying that one tool call (the server executes it,
with its own validation, timeouts and state), and :func:`environment_reward` steps the
model's final answer and asks the server's rubric for the reward. The episode, not the
trainer, is the record: ``GET /v1/episodes/{id}`` shows what the model did.

Fits single-turn and tool environments. Multi-turn environments that answer with user
messages (games, feedback loops) need :class:`~edgegym.trl.EdgegymRolloutFunc`, since
TRL's tool loop has no place for an environment's user turn.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any, Callable, Literal, Sequence

from .. import models as m
from ..client import Client


def _python_type(schema: dict[str, Any]) -> Any:
    """The Python type whose ``get_json_schema`` rendering matches a JSON-schema property
    (nested object and array item schemas are not carried by Python type hints)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return Literal[tuple(schema["enum"])]  # type: ignore[misc]
    simple = {"string": str, "integer": int, "number": float, "boolean": bool}
    if kind in simple:
        return simple[kind]
    if kind == "array":
        items = schema.get("items")
        return list[_python_type(items)] if isinstance(items, dict) and items.get("type") else list  # type: ignore[misc]
    if kind == "object":
        return dict
    return Any


def _one_line(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _tool_method(tool: m.ToolDefinition) -> Callable[..., str]:
    """A method named after the tool whose signature and docstring describe it to TRL. It
    accepts any keywords and forwards them: the server validates the arguments and answers
    a bad call with a tool message, as it would for any client."""
    fn = tool.function
    props: dict[str, Any] = dict(fn.parameters.get("properties") or {})
    required = set(fn.parameters.get("required") or [])

    def call(self: "EdgegymEnvironment", **arguments: Any) -> str:
        return self._call_tool(fn.name, arguments)

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = [_one_line(fn.description) or f"The {fn.name} tool.", "", "Args:"]
    # Required parameters first: a Python signature cannot put a defaulted one before them.
    for name in sorted(props, key=lambda n: n not in required):
        if not name.isidentifier():
            raise ValueError(f"tool {fn.name!r}: parameter {name!r} is not a Python identifier, so TRL cannot pass it as a keyword")
        schema = props[name] if isinstance(props[name], dict) else {}
        hint = _python_type(schema)
        annotations[name] = hint if name in required else hint | None
        default = inspect.Parameter.empty if name in required else None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotations[name]))
        lines.append(f"    {name}: {_one_line(schema.get('description')) or name}")
    if not props:
        lines = lines[:1]
    # No return annotation: get_json_schema would add a "return" entry the server's tool
    # definition does not have (the result is always the tool message's text).
    call.__name__ = fn.name
    call.__qualname__ = fn.name
    call.__doc__ = "\n".join(lines)
    call.__annotations__ = annotations
    call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return call


class EdgegymEnvironment:
    """One rollout's edgegym episode. Instances come from :func:`environment_factory`, which
    adds the environment's tools as methods; TRL reuses an instance across batches by
    calling ``reset`` again. Every public method is offered to the model as a tool, so
    everything else here is private."""

    env_id: str = ""
    env_args: dict[str, Any] | None = None
    close_episodes: bool = True
    client: Client

    def __init__(self) -> None:
        self.episode_id: str | None = None
        self.turn = 0
        self.done = False
        self.stop_reason: str | None = None
        self.score: m.Score | None = None
        self.tool_calls = 0
        self.error: str | None = None

    def reset(self, **row: Any) -> None:
        """Start the episode for this row's task (``edgegym_index``, ``edgegym_split``,
        ``edgegym_seed`` from :func:`edgegym_dataset`). The row's prompt is the episode's
        prompt, so nothing is appended to it."""
        if "edgegym_index" not in row:
            raise ValueError("the dataset row has no edgegym_index: build the training dataset with edgegym_dataset()")
        res = self.client.reset(
            self.env_id,
            split=row.get("edgegym_split") or "train",
            index=int(row["edgegym_index"]),
            seed=row.get("edgegym_seed"),
            args=self.env_args,
        )
        self.episode_id, self.turn, self.done = res.episode_id, res.turn, res.done
        self.stop_reason, self.score, self.tool_calls, self.error = None, None, 0, None
        prompt = row.get("prompt")
        opening = [msg.model_dump(exclude_none=True) for msg in res.messages]
        if isinstance(prompt, list) and prompt != opening:
            raise ValueError(
                f"episode {res.episode_id} opens with different messages than the dataset row's prompt; "
                "the model would be trained on a prompt the environment never gave. Rebuild the dataset with edgegym_dataset()."
            )
        return None

    def _step(self, message: dict[str, Any]) -> m.StepResponse:
        if self.episode_id is None:
            raise RuntimeError("reset() was not called")
        res = self.client.step(self.episode_id, self.turn, message)
        self.turn, self.done, self.stop_reason = res.turn, res.done, res.stop_reason
        return res

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        if self.done:
            # TRL turns the exception into {"error": ...} shown to the model as the tool's result.
            raise RuntimeError(f"the episode is over ({self.stop_reason}); the tool call was not run")
        self.tool_calls += 1
        call_id = f"call_{self.turn}_{self.tool_calls}"
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}],
        }
        res = self._step(message)
        replies = [msg for msg in res.messages if isinstance(msg, m.ToolMessage) and msg.tool_call_id == call_id]
        if not replies:
            raise RuntimeError(f"the environment returned no result for {name} (done={res.done}, stop_reason={res.stop_reason})")
        return m.content_text(replies[0].content)

    def _finish(self, completion: Any) -> m.Score:
        """Step the model's final answer (the last assistant message of TRL's completion,
        unless it is a tool call TRL stopped at) and score the episode; once per episode."""
        if self.score is not None:
            return self.score
        if self.episode_id is None:
            raise RuntimeError("reset() was not called")
        final = _final_assistant(completion)
        if not self.done and final is not None:
            self._step(final)
        self.score = self.client.score(self.episode_id).score
        if self.close_episodes:
            # As the rollout collector does: a scored episode takes no more steps. It stays
            # readable (GET /v1/episodes/{id}) until its TTL runs out.
            self.client.close_episode(self.episode_id)
        return self.score


def _final_assistant(completion: Any) -> dict[str, Any] | None:
    """The last assistant message of a TRL completion as a protocol message, or None when
    the rollout ended on a tool call (its tool already ran; there is no answer to step)."""
    if isinstance(completion, str):
        return {"role": "assistant", "content": completion}
    messages = [msg for msg in completion if msg.get("role") == "assistant"]
    if not messages or messages[-1].get("tool_calls"):
        return None
    last = messages[-1]
    message: dict[str, Any] = {"role": "assistant", "content": last.get("content") or ""}
    if last.get("reasoning_content"):
        message["reasoning_content"] = last["reasoning_content"]
    return message


def environment_factory(
    base_url: str,
    env_id: str,
    *,
    api_key: str | None = None,
    env_args: dict[str, Any] | None = None,
    client: Client | None = None,
    close_episodes: bool = True,
) -> Callable[[], EdgegymEnvironment]:
    """A TRL ``environment_factory`` for a single-turn or tool environment on an edgegym
    server. The environment's tools (``GET /v1/envs/{id}``) become methods named after
    them; one HTTP client is shared by every instance."""
    gym = client or Client(base_url, api_key=api_key)
    info = gym.env(env_id)
    if info.kind == "multi_turn":
        raise ValueError(
            f"{env_id} is a multi-turn environment that answers with user messages; TRL's environment_factory "
            "only feeds back tool results. Use EdgegymRolloutFunc (rollout_func=...) for it."
        )
    members: dict[str, Any] = {"env_id": env_id, "env_args": env_args, "client": gym, "close_episodes": close_episodes, "__doc__": info.description}
    for tool in info.tools:
        name = tool.function.name
        if name.startswith("_") or hasattr(EdgegymEnvironment, name):
            raise ValueError(f"tool {name!r} of {env_id} clashes with a method TRL or edgegym reserves")
        members[name] = _tool_method(tool)
    class_name = "Edgegym_" + re.sub(r"\W", "_", env_id)
    return type(class_name, (EdgegymEnvironment,), members)


def environment_reward(completions: Sequence[Any], environments: Sequence[EdgegymEnvironment] | None = None, **_: Any) -> list[float | None]:
    """TRL reward function for ``environment_factory`` runs: each rollout's final answer is
    stepped into its episode and the environment's rubric scores it."""
    if environments is None:
        raise ValueError("environment_reward needs GRPOTrainer(environment_factory=edgegym.trl.environment_factory(...))")
    return [env._finish(c).reward for c, env in zip(completions, environments, strict=True)]


def environment_component_reward(name: str) -> Callable[..., list[float | None]]:
    """A TRL reward function for one rubric component of ``environment_factory`` runs (log
    it with weight 0 in ``reward_weights``, or train on it)."""

    def reward(completions: Sequence[Any], environments: Sequence[EdgegymEnvironment] | None = None, **_: Any) -> list[float | None]:
        if environments is None:
            raise ValueError("environment_component_reward needs GRPOTrainer(environment_factory=...)")
        out: list[float | None] = []
        for c, env in zip(completions, environments, strict=True):
            scores = {comp.name: comp.score for comp in env._finish(c).components}
            out.append(scores.get(name))
        return out

    reward.__name__ = f"edgegym_{name}"
    return reward


__all__ = ["EdgegymEnvironment", "environment_factory", "environment_reward", "environment_component_reward"]

"""Runs many episodes at once against the edgegym server and a model, keeping exact token provenance."""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..client import AsyncClient
from ..models import message_dict
from .chat_tokens import ChatTokens
from .generator import Generator, SamplingParams
from .tool_calls import HermesToolCallParser, ToolCallParser
from .types import Rollout, RolloutGroup, ScaleRewards, TaskRef, assign_advantages


@dataclass
class CollectorSettings:
    #: Sampling for each assistant turn.
    sampling: SamplingParams = SamplingParams()
    #: Episodes in flight at once (each holds one model request or one server call at a time).
    max_concurrency: int = 64
    #: Prompt + completion tokens an episode may reach; the episode stops (truncated) there.
    max_seq_len: int = 4096
    #: Environment arguments sent with every reset.
    env_args: dict[str, Any] | None = None
    #: Passed to the chat template (e.g. {"enable_thinking": False}).
    template_kwargs: dict[str, Any] | None = None
    #: Close each episode after scoring, so the server can reap it early.
    close_episodes: bool = True
    #: How GRPO advantages are scaled ("group" std, "batch" std, or "none").
    scale_rewards: ScaleRewards = "group"


class RolloutCollector:
    """Drives episodes: reset, then each turn ask the model and step the episode with its
    message (tool calls included), until done; then score.

    For each episode it builds ``prompt_ids``, ``completion_ids``, ``logprobs`` and
    ``env_mask`` from the tokens the generator actually sampled; the environment's
    messages are tokenised as a template delta, never by re-tokenising earlier turns.

    >>> collector = RolloutCollector(gym, generator, tokenizer)
    >>> groups = await collector.collect("my-env", [TaskRef(index=0, seed=1)], num_generations=8)
    """

    def __init__(
        self,
        client: AsyncClient,
        generator: Generator,
        tokenizer: Any,
        settings: CollectorSettings | None = None,
        *,
        tool_parser: ToolCallParser | None = None,
        policy_version: Callable[[], int] = lambda: 0,
    ) -> None:
        self.client = client
        self.generator = generator
        self.tokenizer = tokenizer
        self.settings = settings or CollectorSettings()
        self.tool_parser = tool_parser or HermesToolCallParser()
        self.policy_version = policy_version
        self._slots = asyncio.Semaphore(self.settings.max_concurrency)

    async def collect(self, env_id: str, tasks: Sequence[TaskRef], num_generations: int) -> list[RolloutGroup]:
        """``num_generations`` rollouts of each task, all in flight together (bounded by max_concurrency)."""
        per_task = [
            [asyncio.create_task(self.run_episode(env_id, task)) for _ in range(num_generations)] for task in tasks
        ]
        groups = [RolloutGroup(task=task, rollouts=list(await asyncio.gather(*jobs))) for task, jobs in zip(tasks, per_task)]
        assign_advantages(groups, self.settings.scale_rewards)
        return groups

    async def run_episode(self, env_id: str, task: TaskRef) -> Rollout:
        """One episode. Never raises: a failure is reported on the rollout with its error."""
        rollout = Rollout(env_id=env_id, task=task, policy_version=self.policy_version())
        async with self._slots:
            try:
                await self._run(env_id, task, rollout)
            except Exception as exc:  # noqa: BLE001 - reported on the rollout, never dropped
                rollout.error = f"{type(exc).__name__}: {exc}"
                rollout.reward = None
                rollout.metrics["traceback_lines"] = float(len(traceback.format_exc().splitlines()))
            finally:
                if rollout.episode_id and self.settings.close_episodes:
                    try:
                        await self.client.close(rollout.episode_id)
                    except Exception:  # noqa: BLE001 - closing is housekeeping; the TTL reaps it anyway
                        pass
        return rollout

    async def _run(self, env_id: str, task: TaskRef, rollout: Rollout) -> None:
        s = self.settings
        reset = await self.client.reset(env_id, split=task.split, index=task.index, seed=task.seed, args=s.env_args)
        rollout.episode_id = reset.episode_id
        rollout.index, rollout.seed = reset.index, reset.seed
        tools = [t.model_dump(exclude_none=True) for t in reset.tools]
        chat = ChatTokens(self.tokenizer, tools=tools or None, template_kwargs=s.template_kwargs)
        history = [message_dict(m) for m in reset.messages]
        rollout.prompt_ids = chat.prompt_ids(history)
        ids: list[int] = []  # completion side: model and environment tokens in order
        turn = 0
        done = reset.done
        while not done:
            room = s.max_seq_len - len(rollout.prompt_ids) - len(ids)
            if room <= 0:
                rollout.truncated = True
                rollout.completion_truncated = True
                rollout.stop_reason = "context_limit"
                break
            sampling = s.sampling
            if sampling.max_tokens > room:
                sampling = SamplingParams(**{**sampling.__dict__, "max_tokens": room})
            gen = await self.generator.generate(rollout.prompt_ids + ids, sampling)
            if not gen.completion_ids:
                raise RuntimeError("the generator returned no tokens")
            if len(gen.logprobs) != len(gen.completion_ids):
                raise RuntimeError(f"generator returned {len(gen.logprobs)} logprobs for {len(gen.completion_ids)} tokens")
            start = len(ids)
            ids.extend(gen.completion_ids)
            rollout.logprobs.extend(gen.logprobs)
            rollout.env_mask.extend([1] * len(gen.completion_ids))
            rollout.turn_spans.append((start, len(ids)))
            rollout.completion_truncated = gen.finish_reason == "length"
            message = self.tool_parser.parse(gen.text, turn)
            step = await self.client.step(reset.episode_id, turn, message)
            turn = step.turn
            history.append(message)
            env_messages = [message_dict(m) for m in step.messages]
            history.extend(env_messages)
            done = step.done
            rollout.truncated = step.truncated
            rollout.stop_reason = step.stop_reason
            if done:
                break
            delta = chat.env_delta_ids(history[: len(history) - len(env_messages)], env_messages, gen.completion_ids, gen.finish_reason == "stop")
            ids.extend(delta)
            rollout.logprobs.extend([0.0] * len(delta))
            rollout.env_mask.extend([0] * len(delta))
        rollout.turns = turn
        rollout.completion_ids = ids
        # The environment's last tokens after the final model turn are never trained on: drop a trailing
        # environment span (there is none unless the context limit stopped the episode mid-way).
        while rollout.env_mask and rollout.env_mask[-1] == 0:
            rollout.env_mask.pop()
            rollout.logprobs.pop()
            rollout.completion_ids.pop()
        rollout.messages = history
        scored = await self.client.score(reset.episode_id)
        rollout.reward = scored.score.reward
        rollout.components = {c.name: c.score for c in scored.score.components}
        rollout.metrics = dict(scored.score.metrics)
        if not rollout.completion_ids:
            raise RuntimeError("episode ended before the model generated anything")

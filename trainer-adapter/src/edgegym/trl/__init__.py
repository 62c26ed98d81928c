"""edgegym episodes as TRL GRPOTrainer rollouts (written against TRL 1.16.0).

TRL's contract (``trl/trainer/grpo_trainer.py``, ``_generate``): ``rollout_func(prompts,
trainer)`` gets the batch's prompts (each repeated ``num_generations`` times, the
repeats adjacent) and returns ``prompt_ids``, ``completion_ids`` and ``logprobs`` (one
list per prompt); ``env_mask`` (1 = model token, 0 = environment token) becomes the
loss mask when the trainer has no ``tools``; every other key reaches the reward
functions as a keyword argument.

>>> dataset = edgegym_dataset("http://127.0.0.1:8787", "my-env", n=512)
>>> trainer = GRPOTrainer(model=..., reward_funcs=[edgegym_reward], train_dataset=dataset,
...                       rollout_func=EdgegymRolloutFunc("http://127.0.0.1:8787", "my-env"), args=...)
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, Callable, Sequence

from ..client import AsyncClient, Client
from ..rollouts.chat_tokens import ChatTokens
from ..rollouts.collector import CollectorSettings, RolloutCollector
from ..rollouts.generator import Generator, SamplingParams
from ..rollouts.tool_calls import ToolCallParser
from ..rollouts.types import Rollout, TaskRef
from .environment import EdgegymEnvironment, environment_component_reward, environment_factory, environment_reward
from .prompt_tasks import PromptTasks, prompt_key


def edgegym_dataset(base_url: str, env_id: str, *, split: str = "train", n: int = 256, offset: int = 0, api_key: str | None = None, seed: int = 0) -> Any:
    """A ``datasets.Dataset`` whose ``prompt`` column holds the environment's tasks as chat
    messages, with ``edgegym_index``, ``edgegym_split`` and an episode seed
    (``edgegym_seed``, drawn from ``seed``) naming the task for ``environment_factory`` and
    for ``EdgegymRolloutFunc`` (which reads them from its trainer's datasets)."""
    from datasets import Dataset  # noqa: PLC0415 - a TRL dependency

    rng = random.Random(seed)
    rows = []
    with Client(base_url, api_key=api_key) as gym:
        while len(rows) < n:
            page = gym.examples(env_id, split=split, offset=offset + len(rows), limit=min(500, n - len(rows)))
            if not page.examples:
                break
            for ex in page.examples:
                prompt = [m.model_dump(exclude_none=True) for m in ex.prompt]
                rows.append({"prompt": prompt, "edgegym_index": ex.index, "edgegym_split": split, "edgegym_seed": rng.randrange(2**31)})
    return Dataset.from_list(rows)


class EdgegymRolloutFunc:
    """A TRL ``rollout_func`` that plays each prompt's task as an edgegym episode.

    Adjacent identical prompts form one GRPO group: the same task and episode seed.
    ``generator`` defaults to the trainer's own model in process
    (``TransformersGenerator``); on GPUs pass a ``VLLMGenerator`` for the vLLM server TRL
    syncs weights to. Sampling settings default to the trainer's (temperature, top_p,
    top_k, ``max_completion_length`` as the per-turn token limit).

    Which task a prompt stands for comes from ``tasks``; by default it is built, on the
    first call, from the trainer's ``train_dataset`` and ``eval_dataset`` (made by
    ``edgegym_dataset``). It belongs to this object: another trainer's rollout function
    in the same process has its own.
    """

    def __init__(
        self,
        base_url: str,
        env_id: str,
        *,
        generator: Generator | None = None,
        api_key: str | None = None,
        env_args: dict[str, Any] | None = None,
        max_seq_len: int = 4096,
        max_concurrency: int = 64,
        tool_parser: ToolCallParser | None = None,
        seed: int = 0,
        tasks: PromptTasks | None = None,
    ) -> None:
        self.base_url = base_url
        self.env_id = env_id
        self.generator = generator
        self.api_key = api_key
        self.env_args = env_args
        self.max_seq_len = max_seq_len
        self.max_concurrency = max_concurrency
        self.tool_parser = tool_parser
        self.rng = random.Random(seed)
        self.last_rollouts: list[Rollout] = []
        self.tasks = tasks

    def _tasks(self, trainer: Any) -> PromptTasks:
        if self.tasks is None:
            tasks = PromptTasks.from_dataset(getattr(trainer, "train_dataset", None))
            tasks.extend(getattr(trainer, "eval_dataset", None))
            self.tasks = tasks
        return self.tasks

    def _generator(self, trainer: Any) -> Generator:
        if self.generator is None:
            from ..rollouts.transformers_generator import TransformersGenerator  # noqa: PLC0415

            model = trainer.accelerator.unwrap_model(trainer.model) if hasattr(trainer, "accelerator") else trainer.model
            self.generator = TransformersGenerator(model, trainer.processing_class)
        return self.generator

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, list[Any]]:
        args = trainer.args
        tokenizer = trainer.processing_class
        sampling = SamplingParams(
            max_tokens=int(getattr(args, "max_completion_length", 256) or 256),
            temperature=float(getattr(args, "temperature", 1.0) or 1.0),
            top_p=float(getattr(args, "top_p", 1.0) or 1.0),
            top_k=int(getattr(args, "top_k", 0) or 0),
        )
        tasks = self._tasks(trainer)
        groups: list[tuple[TaskRef, int, Any]] = []
        for prompt in prompts:
            key = prompt_key(prompt)
            if groups and prompt_key(groups[-1][2]) == key:
                task, count, p = groups[-1]
                groups[-1] = (task, count + 1, p)
                continue
            known = tasks.get(prompt)
            if known is None:
                raise KeyError("a prompt that is not in this trainer's datasets: build them with edgegym_dataset(), or pass tasks=")
            groups.append((TaskRef(index=known.index, seed=self.rng.randrange(2**32), split=known.split), 1, prompt))
        generator = self._generator(trainer)

        async def run() -> list[Rollout]:
            async with AsyncClient(self.base_url, api_key=self.api_key) as gym:
                collector = RolloutCollector(
                    gym,
                    generator,
                    tokenizer,
                    CollectorSettings(sampling=sampling, max_concurrency=self.max_concurrency, max_seq_len=self.max_seq_len, env_args=self.env_args),
                    tool_parser=self.tool_parser,
                )
                jobs = [collector.run_episode(self.env_id, task) for task, count, _ in groups for _ in range(count)]
                return list(await asyncio.gather(*jobs))

        rollouts = asyncio.run(run())
        self.last_rollouts = rollouts
        flat_prompts = [p for _, count, p in groups for _ in range(count)]
        return to_trl_batch(rollouts, flat_prompts, tokenizer)


def to_trl_batch(rollouts: Sequence[Rollout], prompts: Sequence[Any], tokenizer: Any) -> dict[str, list[Any]]:
    """Rollouts in the dict a TRL rollout_func returns. A failed rollout becomes one masked
    stop token with reward None (TRL treats it as NaN), and its error is reported."""
    out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "edgegym_reward", "edgegym_components", "edgegym_episode_id", "edgegym_error")}
    eos = tokenizer.eos_token_id
    for r, prompt in zip(rollouts, prompts):
        if r.ok:
            out["prompt_ids"].append(list(r.prompt_ids))
            out["completion_ids"].append(list(r.completion_ids))
            out["logprobs"].append(list(r.logprobs))
            out["env_mask"].append(list(r.env_mask))
        else:
            out["prompt_ids"].append(list(r.prompt_ids) or ChatTokens(tokenizer).prompt_ids(prompt))
            out["completion_ids"].append([eos])
            out["logprobs"].append([0.0])
            out["env_mask"].append([0])
        out["edgegym_reward"].append(r.reward if r.ok else None)
        out["edgegym_components"].append(dict(r.components))
        out["edgegym_episode_id"].append(r.episode_id)
        out["edgegym_error"].append(r.error)
    return out


def edgegym_reward(completions: Sequence[Any], edgegym_reward: Sequence[float | None] | None = None, **_: Any) -> list[float | None]:
    """TRL reward function: the episode's total reward as scored by the environment's rubric."""
    if edgegym_reward is None:
        raise ValueError("edgegym_reward needs the rollout_func EdgegymRolloutFunc (it adds the edgegym_reward field)")
    return list(edgegym_reward)


def component_reward(name: str) -> Callable[..., list[float | None]]:
    """A TRL reward function for one rubric component (log components separately; weight them with
    ``reward_weights``)."""

    def reward(completions: Sequence[Any], edgegym_components: Sequence[dict[str, float]] | None = None, edgegym_error: Sequence[str | None] | None = None, **_: Any) -> list[float | None]:
        comps = edgegym_components or [{} for _ in completions]
        errors = edgegym_error or [None for _ in completions]
        return [None if err else c.get(name) for c, err in zip(comps, errors)]

    reward.__name__ = f"edgegym_{name}"
    return reward


__all__ = [
    "EdgegymRolloutFunc",
    "edgegym_dataset",
    "edgegym_reward",
    "component_reward",
    "to_trl_batch",
    "PromptTasks",
    "EdgegymEnvironment",
    "environment_factory",
    "environment_reward",
    "environment_component_reward",
]

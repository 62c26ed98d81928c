"""Rollouts as the trainer consumes them: exact tokens, logprobs, the environment mask, the score."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class TaskRef:
    """Which task a group runs: every rollout of a group resets with the same index and seed."""

    index: int | None
    seed: int | None
    split: str = "train"

    @property
    def group_id(self) -> str:
        return f"{self.split}:{self.index}:{self.seed}"


@dataclass
class Rollout:
    """One episode.

    ``prompt_ids`` are the opening messages as the model saw them. ``completion_ids``
    are everything after: the model's tokens of each turn, and between turns the
    environment's tokens. ``env_mask`` is 1 on model tokens and 0 on environment
    tokens, so the loss never trains on environment text; ``logprobs`` are the
    sampling logprobs of model tokens (0.0 on environment tokens).

    In a seated episode (several players, docs/multi-agent.md) a rollout is one seat's
    trajectory (``seat``): its own conversation only, so ``env_mask`` is 1 on that seat's
    sampled tokens and everything another seat did reaches it as environment text. The
    rollouts of one episode's seats share ``episode_id``; ``reward`` is the seat's own
    (``score.seats[seat]``) and ``turns`` the number of moves it made.
    """

    env_id: str
    task: TaskRef
    episode_id: str | None = None
    index: int | None = None
    seed: int | None = None
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    reward: float | None = None
    components: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    advantage: float = 0.0
    #: The episode stopped on a limit (turns, context) rather than finishing.
    truncated: bool = False
    #: The last model turn was cut by max_tokens or the context limit (no stop token).
    completion_truncated: bool = False
    stop_reason: str | None = None
    #: Why the rollout failed; a failed rollout has no reward and is left out of training.
    error: str | None = None
    #: The policy version that generated it (the trainer's optimizer step count then).
    policy_version: int = 0
    #: Spans of model turns in completion_ids: (start, end) per turn.
    turn_spans: list[tuple[int, int]] = field(default_factory=list)
    #: For a rollout of a fork: the episode it was forked from and the turn. Its
    #: ``prompt_ids`` are then the whole prefix (turns 0 … fork_turn, ending on the next
    #: generation prompt) and ``completion_ids`` the fork's own turns only.
    parent_episode_id: str | None = None
    fork_turn: int | None = None
    #: The seat whose trajectory this is, in a seated episode; None for a one-player episode.
    seat: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.reward is not None

    @property
    def model_tokens(self) -> int:
        return sum(self.env_mask)


@dataclass
class RolloutGroup:
    """num_generations rollouts of one task (or n forks of one episode's state), with GRPO
    advantages over the ones that succeeded. In a seated environment a group is one seat of
    one task (``seat``): its advantages compare that seat with the same seat of the other
    episodes, never x with o."""

    task: TaskRef
    rollouts: list[Rollout]
    #: For a group of forks: the episode they were forked from and the turn (their shared
    #: prefix), so advantages compare continuations of one mid-episode state.
    parent_episode_id: str | None = None
    fork_turn: int | None = None
    #: The seat every rollout of the group played, in a seated environment.
    seat: str | None = None

    @property
    def rewards(self) -> list[float | None]:
        return [r.reward for r in self.rollouts]

    @property
    def failed(self) -> list[Rollout]:
        return [r for r in self.rollouts if not r.ok]

    def pass_at_k(self, k: int, threshold: float = 0.5) -> float | None:
        """Unbiased pass@k over the rollouts that succeeded: the chance that k of them,
        drawn without replacement, include one with ``reward >= threshold``
        (1 − C(n−c, k)/C(n, k), the estimator and default threshold of the server's eval
        summaries). For a group of forks: pass@k from that mid-episode state. None when
        fewer than ``k`` rollouts succeeded (failed ones are not samples of the policy).
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, not {k}")
        rewards = [r.reward for r in self.rollouts if r.ok and r.reward is not None]
        n = len(rewards)
        if n < k:
            return None
        c = sum(1 for x in rewards if x >= threshold)
        none_pass = 1.0  # C(n-c, k) / C(n, k) as a running product: no overflow for large n
        for i in range(k):
            none_pass *= max(0, n - c - i) / (n - i)
        return 1.0 - none_pass


ScaleRewards = Literal["group", "batch", "none"]


def _mean_std(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    # Bessel-corrected, as TRL's GRPOTrainer (v1.16, trl/trainer/utils.py nanstd) computes it.
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var)


def assign_advantages(groups: list[RolloutGroup], scale: ScaleRewards = "group", eps: float = 1e-4) -> None:
    """GRPO advantages: reward minus its group's mean, divided by a std (+eps) unless ``scale == "none"``.

    Follows TRL v1.16 ``GRPOTrainer._generate_and_score_completions``: ``"group"``
    divides by the group's std, ``"batch"`` by the whole batch's. Failed rollouts get
    advantage 0 and do not count in their group's statistics.
    """
    batch = [r.reward for g in groups for r in g.rollouts if r.ok]
    batch_std = _mean_std(batch)[1] if len(batch) > 1 else 0.0  # type: ignore[arg-type]
    for group in groups:
        ok = [r for r in group.rollouts if r.ok]
        for r in group.rollouts:
            r.advantage = 0.0
        if not ok:
            continue
        mean, std = _mean_std([r.reward for r in ok])  # type: ignore[misc]
        for r in ok:
            adv = r.reward - mean  # type: ignore[operator]
            if scale == "group":
                adv = adv / (std + eps)
            elif scale == "batch":
                adv = adv / (batch_std + eps)
            r.advantage = adv

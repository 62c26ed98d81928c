"""Rollouts to padded tensors, and per-token logprobs of a model on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ..rollouts.types import Rollout


@dataclass
class RolloutBatch:
    """Prompts left-padded, completions right-padded, concatenated: ``input_ids`` is
    (B, P + C) and every completion-side tensor is (B, C), aligned with the last C columns."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    #: 1 on real completion tokens (model or environment), 0 on padding.
    completion_mask: torch.Tensor
    #: 1 on model tokens, 0 on environment tokens and padding.
    env_mask: torch.Tensor
    sampler_logps: torch.Tensor
    advantages: torch.Tensor
    #: 1 for rollouts whose last turn was cut by max_tokens / the context limit.
    truncated: torch.Tensor

    @property
    def completion_width(self) -> int:
        return int(self.completion_mask.shape[1])

    def loss_mask(self, mask_truncated: bool) -> torch.Tensor:
        mask = self.completion_mask * self.env_mask
        if mask_truncated:
            mask = mask * (1 - self.truncated).unsqueeze(1)
        return mask

    def to(self, device: torch.device | str) -> "RolloutBatch":
        return RolloutBatch(**{k: v.to(device) for k, v in self.__dict__.items()})


def collate(rollouts: Sequence[Rollout], pad_id: int) -> RolloutBatch:
    if not rollouts:
        raise ValueError("no rollouts to collate")
    P = max(len(r.prompt_ids) for r in rollouts)
    C = max(len(r.completion_ids) for r in rollouts)
    B = len(rollouts)
    input_ids = torch.full((B, P + C), pad_id, dtype=torch.long)
    attention = torch.zeros((B, P + C), dtype=torch.long)
    completion_mask = torch.zeros((B, C), dtype=torch.float32)
    env_mask = torch.zeros((B, C), dtype=torch.float32)
    sampler = torch.zeros((B, C), dtype=torch.float32)
    for i, r in enumerate(rollouts):
        p, c = len(r.prompt_ids), len(r.completion_ids)
        input_ids[i, P - p : P] = torch.tensor(r.prompt_ids, dtype=torch.long)
        input_ids[i, P : P + c] = torch.tensor(r.completion_ids, dtype=torch.long)
        attention[i, P - p : P + c] = 1
        completion_mask[i, :c] = 1
        env_mask[i, :c] = torch.tensor(r.env_mask, dtype=torch.float32)
        sampler[i, :c] = torch.tensor(r.logprobs, dtype=torch.float32)
    position_ids = (attention.cumsum(dim=1) - 1).clamp(min=0)
    return RolloutBatch(
        input_ids=input_ids,
        attention_mask=attention,
        position_ids=position_ids,
        completion_mask=completion_mask,
        env_mask=env_mask,
        sampler_logps=sampler,
        advantages=torch.tensor([r.advantage for r in rollouts], dtype=torch.float32),
        truncated=torch.tensor([1.0 if r.completion_truncated else 0.0 for r in rollouts], dtype=torch.float32),
    )


def token_logps(model: Any, batch: RolloutBatch, temperature: float = 1.0) -> torch.Tensor:
    """Log-probability of each completion token under ``model`` at ``temperature`` (B, C).

    Logits are divided by the sampling temperature before the softmax, as TRL does, so
    the ratio to the sampler's processed logprobs compares like with like.
    """
    C = batch.completion_width
    out = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        use_cache=False,
    )
    logits = out.logits[:, -C - 1 : -1, :].float()
    if temperature > 0 and temperature != 1.0:
        logits = logits / temperature
    targets = batch.input_ids[:, -C:]
    return torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)

"""GRPO policy losses, as TRL's GRPOTrainer defines them.

Source: TRL v1.16.0, ``trl/trainer/grpo_trainer.py`` (``GRPOTrainer._compute_loss`` and
the importance-sampling block of ``_generate_and_score_completions``), and the
``loss_type`` documentation in ``trl/trainer/grpo_config.py``. Per token ``t`` of
completion ``i`` with advantage ``A_i``:

    ratio  r = exp(logp - old_logp)
    clip   c = clamp(r, 1 - epsilon, 1 + epsilon_high)
    (delta set: r = min(r, delta))                  # two-sided clipping, INTELLECT-2
    loss_t = -min(r * A, c * A)
    loss_t *= is_ratio                              # sampler/trainer mismatch correction
    loss_t += beta * (exp(ref - logp) - (ref - logp) - 1)   # k3 KL estimator

Reduction over the masked tokens (mask = completion mask × env mask):

- ``grpo``:    mean over sequences of (sum_t loss / tokens in the sequence)
- ``dr_grpo``: sum of all token losses / (sequences × max_completion_length)   (Dr. GRPO)
- ``dapo``:    sum of all token losses / active tokens in the whole accumulated batch (DAPO)

``grpo`` and ``dr_grpo`` are divided by the number of gradient-accumulation
micro-batches; ``dapo`` divides by the token count of the whole accumulation window,
so micro-batches add up to one token-level mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

LossType = Literal["grpo", "dr_grpo", "dapo"]
ISMode = Literal["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]


@dataclass(frozen=True)
class LossSettings:
    loss_type: LossType = "dapo"
    epsilon: float = 0.2
    epsilon_high: float | None = None
    delta: float | None = None
    beta: float = 0.0
    #: Used by dr_grpo: the constant per-sequence normaliser.
    max_completion_length: int = 1024


@dataclass
class LossOutput:
    loss: torch.Tensor
    #: The policy part without the accumulation scaling (for logging).
    policy_loss: float
    kl: float
    clip_fraction: float
    mean_ratio: float


def importance_weights(
    trainer_logps: torch.Tensor,
    sampler_logps: torch.Tensor,
    mask: torch.Tensor,
    mode: ISMode = "sequence_mask",
    cap: float | None = 3.0,
    floor: float | None = None,
) -> torch.Tensor:
    """Correction for tokens sampled by another engine or an older policy: exp(trainer - sampler).

    ``*_truncate`` clamps the ratio to [floor, cap]; ``*_mask`` zeroes tokens (or whole
    sequences) whose ratio falls outside. Sequence modes use the summed log-ratio of
    the sequence. Tokens whose sampler logprob is NaN get ratio 1. Defaults as TRL's
    (``vllm_importance_sampling_mode="sequence_mask"``, cap 3.0).
    """
    diff = torch.nan_to_num((trainer_logps - sampler_logps) * mask, nan=0.0)
    if mode.startswith("sequence"):
        diff = diff.sum(dim=-1, keepdim=True)
    ratio = torch.exp(diff)
    if mode.endswith("truncate"):
        ratio = torch.clamp(ratio, min=floor, max=cap)
    else:
        lo = floor if floor is not None else float("-inf")
        hi = cap if cap is not None else float("inf")
        ratio = ratio.masked_fill((ratio < lo) | (ratio > hi), 0.0)
    return ratio


def policy_loss(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    settings: LossSettings,
    *,
    ref_logps: torch.Tensor | None = None,
    is_ratio: torch.Tensor | None = None,
    accumulation_steps: int = 1,
    tokens_in_window: float | None = None,
) -> LossOutput:
    """The loss of one micro-batch. Shapes: (batch, tokens) except ``advantages`` (batch,).

    ``tokens_in_window`` (dapo only) is the number of masked tokens across every
    micro-batch of the optimizer step; it defaults to this micro-batch's count.
    """
    mask = mask.to(logps.dtype)
    adv = advantages.unsqueeze(1) if advantages.dim() == 1 else advantages
    eps_low = settings.epsilon
    eps_high = settings.epsilon_high if settings.epsilon_high is not None else settings.epsilon
    ratio = torch.exp(logps - old_logps)
    clipped = torch.clamp(ratio, 1 - eps_low, 1 + eps_high)
    if settings.delta is not None:
        ratio = torch.clamp(ratio, max=settings.delta)
    per_token = -torch.min(ratio * adv, clipped * adv)
    if is_ratio is not None:
        per_token = per_token * is_ratio
    kl_value = 0.0
    if settings.beta != 0.0:
        if ref_logps is None:
            raise ValueError("beta != 0 needs ref_logps")
        d = ref_logps - logps
        per_token_kl = torch.exp(d) - d - 1
        per_token = per_token + settings.beta * per_token_kl
        kl_value = float((per_token_kl.detach() * mask).sum() / mask.sum().clamp(min=1.0))

    if settings.loss_type == "grpo":
        loss = ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
        logged = float(loss.detach())
        loss = loss / accumulation_steps
    elif settings.loss_type == "dr_grpo":
        loss = (per_token * mask).sum() / (per_token.size(0) * settings.max_completion_length)
        logged = float(loss.detach())
        loss = loss / accumulation_steps
    elif settings.loss_type == "dapo":
        window = tokens_in_window if tokens_in_window is not None else float(mask.sum())
        loss = (per_token * mask).sum() / max(window, 1.0)
        logged = float((per_token.detach() * mask).sum() / mask.sum().clamp(min=1.0))
    else:
        raise ValueError(f"unknown loss_type {settings.loss_type!r}: use grpo, dr_grpo or dapo")

    with torch.no_grad():
        # A token is clipped when the clipped term is the one min() picked and it differs from the raw term.
        low = (ratio < 1 - eps_low) & (adv < 0)
        high = (ratio > 1 + eps_high) & (adv > 0)
        n = mask.sum().clamp(min=1.0)
        clip_fraction = float(((low | high).to(mask.dtype) * mask).sum() / n)
        mean_ratio = float((ratio.detach() * mask).sum() / n)
    return LossOutput(loss=loss, policy_loss=logged, kl=kl_value, clip_fraction=clip_fraction, mean_ratio=mean_ratio)

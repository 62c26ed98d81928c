"""The GRPO run the learning tests share: edgegym-train on letter-a (reward for answering
A) with short answers, DAPO loss without KL, one batch generated ahead, quiet; each test
sets the model, backend, steps and what else it is about."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edgegym.grpo import GRPOConfig


def letter_a_config(model: Path, server_url: str, output_dir: Path, **settings: Any) -> GRPOConfig:
    base: dict[str, Any] = dict(env_id="letter-a", num_generations=8, tasks_per_step=4, max_tokens=4, max_seq_len=128, loss_type="dapo", beta=0.0, num_batches_ahead=1, progress="none", seed=1)
    return GRPOConfig(model=str(model), server_url=server_url, output_dir=str(output_dir), **{**base, **settings})

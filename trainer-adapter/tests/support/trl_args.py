"""TRL's GRPOConfig as the tests that train with TRL's own GRPOTrainer use it: a couple of
CPU steps in float32, nothing saved or reported; each test adds what it is about."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def tiny_trl_args(output_dir: Path, **settings: Any) -> Any:
    """``trl.GRPOConfig`` for a short CPU run into ``output_dir``; ``settings`` add or override fields."""
    from trl import GRPOConfig  # noqa: PLC0415 - trl is optional: its tests import it after importorskip

    base: dict[str, Any] = dict(
        per_device_train_batch_size=4,
        num_generations=4,
        max_steps=2,
        learning_rate=1e-3,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        seed=0,
    )
    return GRPOConfig(output_dir=str(output_dir), **{**base, **settings})

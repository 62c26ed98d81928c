"""``edgegym-train sft --config FILE``: supervised fine-tuning on SFT data from `edgegym generate`."""

from __future__ import annotations

import argparse

from .._config import add_config_arguments, load_config
from .config import SFTConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="edgegym-train sft", description=__doc__)
    add_config_arguments(parser, "SFTConfig", required=True)
    args = parser.parse_args(argv)
    config = load_config(SFTConfig, "edgegym-train sft", args.config, args.set)
    if config is None:
        return 2
    from .trainer import SFTTrainer  # noqa: PLC0415 - torch loads only once the config is good

    trainer = SFTTrainer(config)
    history = trainer.train()
    print(f"done: {len(history)} steps on {len(trainer.examples)} conversations, loss {history[0]['loss']:.4f} -> {history[-1]['loss']:.4f}; model in {trainer.output_dir}")
    return 0

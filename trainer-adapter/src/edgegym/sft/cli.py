"""``edgegym-train sft --config FILE``: supervised fine-tuning on SFT data from `edgegym generate`."""

from __future__ import annotations

import argparse
import json
import sys

from ..grpo.config import ConfigError
from .config import SFTConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="edgegym-train sft", description=__doc__)
    parser.add_argument("--config", required=True, help="TOML file whose top-level keys are SFTConfig fields")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a setting (JSON value or plain string)")
    args = parser.parse_args(argv)
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"edgegym-train sft: --set {item!r}: write KEY=VALUE", file=sys.stderr)
            return 2
        try:
            overrides[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            overrides[key.strip()] = value
    try:
        config = SFTConfig.from_toml(args.config, overrides)
    except (ConfigError, OSError) as exc:
        print(f"edgegym-train sft: {exc}", file=sys.stderr)
        return 2
    from .trainer import SFTTrainer  # noqa: PLC0415 - torch loads only once the config is good

    trainer = SFTTrainer(config)
    history = trainer.train()
    print(f"done: {len(history)} steps on {len(trainer.examples)} conversations, loss {history[0]['loss']:.4f} -> {history[-1]['loss']:.4f}; model in {trainer.output_dir}")
    return 0

"""``edgegym-train [grpo] --config FILE``: GRPO on an edgegym environment, one line of metrics per step.

``edgegym-train sft --config FILE`` fine-tunes on SFT data first (see edgegym.sft)."""

from __future__ import annotations

import argparse
import json
import sys

from .._config import add_config_arguments, load_config
from .config import GRPOConfig, defaults, field_docs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Subcommands: `sft --config FILE` (supervised fine-tuning); `grpo` or nothing: GRPO as before.
    if argv[:1] == ["sft"]:
        from ..sft.cli import main as sft_main  # noqa: PLC0415

        return sft_main(argv[1:])
    if argv[:1] == ["grpo"]:
        argv = argv[1:]
    parser = argparse.ArgumentParser(prog="edgegym-train", description=__doc__)
    add_config_arguments(parser, "GRPOConfig", required=False)
    parser.add_argument("--help-config", action="store_true", help="list every setting with its default and meaning")
    args = parser.parse_args(argv)
    if args.help_config:
        docs = field_docs()
        for name, default in defaults().items():
            print(f"{name} = {json.dumps(default)}\n    {docs.get(name, '')}")
        return 0
    if not args.config:
        parser.error("--config FILE is required (see --help-config for the settings)")
    config = load_config(GRPOConfig, "edgegym-train", args.config, args.set)
    if config is None:
        return 2
    from .trainer import GRPOTrainer  # noqa: PLC0415 - torch loads only once the config is good

    history = GRPOTrainer(config).train()
    if history:
        first, last = history[0], history[-1]
        print(f"done: {len(history)} steps, reward {first['reward_mean']:.3f} -> {last['reward_mean']:.3f}; metrics in {config.log_file or config.output_dir + '/metrics.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The tic-tac-toe recipe's evaluation: how a model plays, before and after training.

    python -m edgegym.recipes.tic_tac_toe eval --model DIR [--adapter DIR] --server URL \\
        --games 100 --label sft --out results.jsonl

Plays ``--games`` games against each opponent (random, minimax) on the environment's *eval*
split, tasks 0..N-1 with fixed episode seeds, so every model meets the same openings and, for
the random opponent, the same sequence of opponent choices as long as it plays the same moves.
Decoding is greedy by default. Reports, with 95 % Wilson intervals:

- the invalid-move rate: invalid moves / all moves the model tried (unparseable, off the board
  or on a taken cell; three forfeit the game);
- win / draw / loss rates per opponent (a forfeit counts as a loss);
- the score, win + ½ draw, per opponent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from .stats import wilson

ENV_ID = "tic-tac-toe"
OPPONENTS = ("random", "minimax")
#: Held-out episode seeds: task i of the eval split plays with seed EVAL_SEED_BASE + i.
EVAL_SEED_BASE = 900_000


def summarise(rollouts: Sequence[Any]) -> dict[str, Any]:
    """Rates over finished games (a failed rollout counts as a lost game with no moves)."""
    n = len(rollouts)
    wins = sum(r.metrics.get("win", 0.0) for r in rollouts if r.ok)
    draws = sum(r.metrics.get("draw", 0.0) for r in rollouts if r.ok)
    losses = n - wins - draws
    invalid = sum(r.components.get("invalid_moves", 0.0) for r in rollouts if r.ok)
    valid = sum(r.metrics.get("model_moves", 0.0) for r in rollouts if r.ok)
    tried = int(invalid + valid)
    score = [(r.metrics.get("win", 0.0) + 0.5 * r.metrics.get("draw", 0.0)) if r.ok else 0.0 for r in rollouts]
    mean_score = statistics.fmean(score) if score else 0.0
    # The score is a mean of values in {0, ½, 1}: a normal interval on it (its std / √n).
    half = 1.96 * statistics.pstdev(score) / (n**0.5) if n > 1 else 0.5
    out: dict[str, Any] = {
        "games": n,
        "failed": sum(1 for r in rollouts if not r.ok),
        "moves": tried,
        "invalid_rate": invalid / tried if tried else 1.0,
        "invalid_ci": list(wilson(invalid, tried)) if tried else [0.0, 1.0],
        "score": mean_score,
        "score_ci": [max(0.0, mean_score - half), min(1.0, mean_score + half)],
        "reward": statistics.fmean([float(r.reward) for r in rollouts if r.ok]) if any(r.ok for r in rollouts) else 0.0,
    }
    for name, count in (("win", wins), ("draw", draws), ("loss", losses)):
        out[name] = count / n if n else 0.0
        out[f"{name}_ci"] = list(wilson(count, n))
    return out


async def evaluate_async(client: Any, generator: Any, tokenizer: Any, *, games: int, opponents: Sequence[str] = OPPONENTS, max_tokens: int = 48, temperature: float = 0.0, max_seq_len: int = 4096, concurrency: int = 32, env_args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Plays the fixed held-out games against each opponent; returns per-opponent summaries and
    the invalid-move rate over all of them. ``env_args`` are added to each opponent's
    (e.g. ``{"max_invalid_moves": 5}``)."""
    from ..rollouts import CollectorSettings, RolloutCollector, SamplingParams, TaskRef  # noqa: PLC0415

    results: dict[str, Any] = {}
    everything: list[Any] = []
    for opponent in opponents:
        collector = RolloutCollector(
            client,
            generator,
            tokenizer,
            CollectorSettings(
                sampling=SamplingParams(max_tokens=max_tokens, temperature=temperature),
                max_seq_len=max_seq_len,
                env_args={**(env_args or {}), "opponent": opponent},
                max_concurrency=concurrency,
                send_sampled=False,
            ),
        )
        tasks = [TaskRef(index=i, seed=EVAL_SEED_BASE + i, split="eval") for i in range(games)]
        groups = await collector.collect(ENV_ID, tasks, 1)
        rollouts = [r for g in groups for r in g.rollouts]
        everything += rollouts
        results[opponent] = summarise(rollouts)
    overall = summarise(everything)
    results["invalid_rate"] = overall["invalid_rate"]
    results["invalid_ci"] = overall["invalid_ci"]
    return results


def evaluate(model: Any, tokenizer: Any, server_url: str, **kwargs: Any) -> dict[str, Any]:
    """``evaluate_async`` with an in-process generator over ``model``."""
    from .. import AsyncClient  # noqa: PLC0415
    from ..rollouts.transformers_generator import TransformersGenerator  # noqa: PLC0415

    async def run() -> dict[str, Any]:
        async with AsyncClient(server_url) as gym:
            return await evaluate_async(gym, TransformersGenerator(model, tokenizer), tokenizer, **kwargs)

    return asyncio.run(run())


def format_row(label: str, r: dict[str, Any]) -> str:
    pct = lambda x: f"{100 * x:.0f}"  # noqa: E731
    ci = lambda c: f"[{pct(c[0])}–{pct(c[1])}]"  # noqa: E731
    parts = [f"{label}: invalid {pct(r['invalid_rate'])}% {ci(r['invalid_ci'])}"]
    for opp in OPPONENTS:
        if opp in r:
            o = r[opp]
            parts.append(f"vs {opp}: W/D/L {pct(o['win'])}/{pct(o['draw'])}/{pct(o['loss'])}% (draw {ci(o['draw_ci'])}), score {o['score']:.2f} {ci(o['score_ci'])}")
    return " | ".join(parts)


def load_model(path: str, adapter: str | None = None, dtype: str = "float32") -> tuple[Any, Any]:
    """A model directory, optionally with a LoRA adapter (a GRPO checkpoint of a use_lora run) merged in."""
    import torch  # noqa: PLC0415
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    model_path = os.path.expanduser(path)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=getattr(torch, dtype))
    if adapter:
        from peft import PeftModel  # noqa: PLC0415

        model = PeftModel.from_pretrained(model, os.path.expanduser(adapter)).merge_and_unload()
    model.eval()
    if torch.cuda.is_available():
        model = model.to("cuda")
    return model, tokenizer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m edgegym.recipes.tic_tac_toe", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="play the held-out games and report rates with confidence intervals")
    ev.add_argument("--model", required=True)
    ev.add_argument("--adapter", default=None, help="LoRA adapter directory (e.g. outputs/…/checkpoint-N)")
    ev.add_argument("--server", default="http://127.0.0.1:8787")
    ev.add_argument("--games", type=int, default=100, help="games per opponent (eval tasks 0..N-1)")
    ev.add_argument("--opponents", default=",".join(OPPONENTS))
    ev.add_argument("--max-tokens", type=int, default=48)
    ev.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    ev.add_argument("--label", default=None, help="name of this row (default: the model path)")
    ev.add_argument("--out", default=None, help="append the result as one JSON line to this file")
    ev.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= 10_000:
        parser.error("--games must be 1 to 10000")
    opponents = [o for o in args.opponents.split(",") if o]
    if any(o not in OPPONENTS for o in opponents):
        parser.error(f"--opponents: choose from {', '.join(OPPONENTS)}")

    import torch  # noqa: PLC0415

    if args.threads:
        torch.set_num_threads(args.threads)
    model, tokenizer = load_model(args.model, args.adapter)
    started = time.monotonic()
    result = evaluate(model, tokenizer, args.server, games=args.games, opponents=opponents, max_tokens=args.max_tokens, temperature=args.temperature)
    label = args.label or args.adapter or args.model
    result.update(label=label, model=args.model, adapter=args.adapter, games=args.games, temperature=args.temperature, seconds=time.monotonic() - started)
    print(format_row(label, result))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A PNG of a training run from its metrics.jsonl: mean reward and invalid moves per step.

    python trainer-adapter/examples/plot_metrics.py outputs/ttt-grpo/metrics.jsonl -o docs/img/ttt-grpo.png

Reads what ``edgegym-train`` writes each step (``reward_mean``, and ``reward/invalid_moves``, the
mean number of invalid moves per game, when the environment's rubric has that component). Needs
matplotlib (the ``[plot]`` extra). A moving average over ``--smooth`` steps is drawn over the raw
points, because per-step means over a few dozen games are noisy.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if isinstance(r, dict) and "step" in r]


def moving_average(values: list[float], window: int) -> list[float]:
    out: list[float] = []
    for i in range(len(values)):
        chunk = [v for v in values[max(0, i - window + 1) : i + 1] if not math.isnan(v)]
        out.append(sum(chunk) / len(chunk) if chunk else math.nan)
    return out


def plot(rows: list[dict[str, Any]], out: str | Path, *, title: str = "", smooth: int = 5) -> Path:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")  # files only: no display on a server
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    if not rows:
        raise ValueError("no metrics rows to plot")
    steps = [r["step"] for r in rows]
    series = [("reward_mean", "mean reward", "tab:blue")]
    if any("reward/invalid_moves" in r for r in rows):
        series.append(("reward/invalid_moves", "invalid moves per game", "tab:red"))
    fig, axes = plt.subplots(len(series), 1, figsize=(7, 2.6 * len(series)), sharex=True, squeeze=False)
    for ax, (key, label, colour) in zip(axes[:, 0], series):
        values = [float(r.get(key, math.nan)) for r in rows]
        ax.plot(steps, values, "o", ms=3, alpha=0.35, color=colour)
        ax.plot(steps, moving_average(values, smooth), "-", color=colour, label=f"{label} ({smooth}-step mean)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[-1, 0].set_xlabel("step")
    axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics", help="metrics.jsonl of an edgegym-train run")
    parser.add_argument("-o", "--out", default=None, help="PNG path (default: beside the metrics file)")
    parser.add_argument("--title", default="")
    parser.add_argument("--smooth", type=int, default=5)
    args = parser.parse_args(argv)
    out = args.out or str(Path(args.metrics).with_suffix(".png"))
    print(plot(read_metrics(args.metrics), out, title=args.title, smooth=max(1, args.smooth)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

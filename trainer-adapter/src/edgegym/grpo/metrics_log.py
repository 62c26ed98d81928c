"""Per-step metrics: a JSONL file, the console, and Weights & Biases when asked for."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

CONSOLE_COLUMNS = [
    ("step", "step", "{:>5d}"),
    ("reward", "reward_mean", "{:>7.3f}"),
    ("loss", "loss", "{:>8.4f}"),
    ("kl", "kl", "{:>7.4f}"),
    ("clip", "clip_fraction", "{:>6.3f}"),
    ("tok/s", "tokens_per_second", "{:>8.1f}"),
    ("failed", "failed", "{:>6d}"),
]


class MetricsLogger:
    def __init__(self, path: str | Path, *, progress: str = "plain", wandb_project: str | None = None, wandb_run_name: str | None = None, config: dict[str, Any] | None = None, total_steps: int | None = None, stream: TextIO | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.path, "a", encoding="utf-8")
        self.progress = progress
        self.stream = stream or sys.stdout
        self.total_steps = total_steps
        self._wandb = None
        self._live = None
        self._rows: list[dict[str, Any]] = []
        if wandb_project:
            try:
                import wandb  # noqa: PLC0415 - optional
            except ImportError as exc:
                raise RuntimeError("wandb_project is set but wandb is not installed: pip install 'edgegym[wandb]'") from exc
            self._wandb = wandb.init(project=wandb_project, name=wandb_run_name, config=config or {})
        if progress == "rich":
            try:
                from rich.console import Console  # noqa: PLC0415
                from rich.live import Live  # noqa: PLC0415

                self._live = Live(self._table(), console=Console(file=self.stream), refresh_per_second=4)
                self._live.start()
            except ImportError:
                self.progress = "plain"
        elif progress == "plain":
            header = " ".join(f"{name:>{len(fmt.format(0) if 'd' in fmt else fmt.format(0.0))}}" for name, _, fmt in CONSOLE_COLUMNS)
            print(header, file=self.stream, flush=True)

    def _table(self) -> Any:
        from rich.table import Table  # noqa: PLC0415

        title = "edgegym GRPO" + (f" ({len(self._rows)}/{self.total_steps} steps)" if self.total_steps else "")
        table = Table(title=title)
        for name, _, _ in CONSOLE_COLUMNS:
            table.add_column(name, justify="right")
        for row in self._rows[-15:]:
            table.add_row(*[self._fmt(row, key, fmt) for _, key, fmt in CONSOLE_COLUMNS])
        return table

    @staticmethod
    def _fmt(row: dict[str, Any], key: str, fmt: str) -> str:
        value = row.get(key)
        if value is None:
            return "-"
        try:
            return fmt.format(int(value) if "d" in fmt else float(value))
        except (TypeError, ValueError):
            return str(value)

    def log(self, metrics: dict[str, Any]) -> None:
        self.file.write(json.dumps(metrics, default=float) + "\n")
        self.file.flush()
        self._rows.append(metrics)
        if self._wandb is not None:
            self._wandb.log({k: v for k, v in metrics.items() if isinstance(v, (int, float))}, step=int(metrics.get("step", 0)))
        if self._live is not None:
            self._live.update(self._table())
        elif self.progress == "plain":
            print(" ".join(self._fmt(metrics, key, fmt) for _, key, fmt in CONSOLE_COLUMNS), file=self.stream, flush=True)

    def message(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text)
        elif self.progress != "none":
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
        if self._wandb is not None:
            self._wandb.finish()
        self.file.close()

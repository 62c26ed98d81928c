"""Checkpoints: the model in Hugging Face format (or the LoRA adapter), plus optimizer,
scheduler and step, so a run resumes where it stopped. Task order is a function of the
step, so a resumed run trains on the same tasks it would have."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import torch

STATE_FILE = "trainer_state.pt"


def checkpoint_dirs(output_dir: Path) -> list[Path]:
    found = []
    for p in Path(output_dir).glob("checkpoint-*"):
        m = re.fullmatch(r"checkpoint-(\d+)", p.name)
        if m and (p / STATE_FILE).exists():
            found.append((int(m.group(1)), p))
    return [p for _, p in sorted(found)]


def find_latest_checkpoint(output_dir: Path) -> Path | None:
    dirs = checkpoint_dirs(output_dir)
    return dirs[-1] if dirs else None


def save_checkpoint(trainer: Any, output_dir: Path, keep: int) -> Path:
    path = Path(output_dir) / f"checkpoint-{trainer.version}"
    path.mkdir(parents=True, exist_ok=True)
    trainer.model.save_pretrained(str(path))
    trainer.tokenizer.save_pretrained(str(path))
    torch.save(
        {
            "version": trainer.version,
            "optimizer": trainer.optimizer.state_dict(),
            "scheduler": trainer.scheduler.state_dict(),
            "torch_rng": torch.get_rng_state(),
        },
        path / STATE_FILE,
    )
    (path / "edgegym_config.json").write_text(json.dumps(trainer.config.to_dict(), indent=2, default=str))
    if keep > 0:
        for old in checkpoint_dirs(output_dir)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    return path


def load_trainer_state(path: Path, optimizer: torch.optim.Optimizer, scheduler: Any) -> int:
    state = torch.load(Path(path) / STATE_FILE, map_location="cpu", weights_only=False)
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"])
    return int(state["version"])

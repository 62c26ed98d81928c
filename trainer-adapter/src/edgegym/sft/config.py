"""Settings of ``edgegym-train sft``: one documented field each, checked before torch loads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .._config import Problems, TomlConfig


@dataclass
class SFTConfig(TomlConfig):
    #: Model to fine-tune: a local directory or a cached Hugging Face id ("~/" is expanded).
    model: str = ""
    #: SFT data: the chat JSONL or Parquet that `edgegym generate` / `edgegym export-sft` write
    #: (one row per conversation: `messages`, and `tools` when the environment has tools).
    data: str = ""
    #: Where the fine-tuned model (merged, loadable by path) and metrics.jsonl go.
    output_dir: str = "outputs/edgegym-sft"
    #: Optimiser steps; each draws `batch_size × gradient_accumulation_steps` conversations.
    max_steps: int = 100
    #: Conversations per micro-batch.
    batch_size: int = 4
    #: Micro-batches per optimiser step.
    gradient_accumulation_steps: int = 1
    #: Peak learning rate (LoRA wants roughly 10× the full fine-tuning rate).
    learning_rate: float = 2e-4
    #: Linear warm-up from 0.
    warmup_steps: int = 5
    #: After warm-up: constant, or linear / cosine decay to 0 at max_steps.
    lr_scheduler: Literal["constant", "linear", "cosine"] = "constant"
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    #: Conversations longer than this (tokens) are cut; the loss covers only what is kept.
    max_seq_len: int = 2048
    #: Train rank-r adapters on `lora_target_modules` (peft) instead of every weight.
    use_lora: bool = True
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_target_modules: list[str] | str = "all-linear"
    #: With LoRA: save the base model with the adapter merged in (loadable by path anywhere,
    #: the GRPO trainer's start), or false to save the adapter alone.
    merge_lora: bool = True
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    #: "auto" (CUDA when present), "cpu", "cuda", "cuda:1"…
    device: str = "auto"
    gradient_checkpointing: bool = False
    #: Extra keyword arguments for the chat template (e.g. {"enable_thinking": false}).
    template_kwargs: dict[str, Any] = field(default_factory=dict)
    #: metrics.jsonl path (default: output_dir/metrics.jsonl).
    log_file: str | None = None
    #: Order of conversations and initialisation.
    seed: int = 0

    def validate(self) -> "SFTConfig":
        need = (problems := Problems()).need
        need(bool(self.model), 'model is empty: set model = "path/to/model"')
        need(bool(self.data), 'data is empty: set data = "sft.jsonl" (written by `edgegym generate` or `edgegym export-sft`)')
        need(self.max_steps >= 1, "max_steps must be at least 1")
        need(self.batch_size >= 1, "batch_size must be at least 1")
        need(self.gradient_accumulation_steps >= 1, "gradient_accumulation_steps must be at least 1")
        need(self.learning_rate > 0, "learning_rate must be positive")
        need(self.warmup_steps >= 0, "warmup_steps must be ≥ 0")
        need(self.max_grad_norm > 0, "max_grad_norm must be positive")
        need(self.max_seq_len >= 16, "max_seq_len must be at least 16")
        need(self.lora_r >= 1 or not self.use_lora, "lora_r must be at least 1")
        problems.raise_any()
        return self

"""Supervised fine-tuning on environment conversations: completion-only loss, LoRA or full."""

from __future__ import annotations

import json
import math
import os
import random
import time
from pathlib import Path
from typing import Any

from .config import SFTConfig
from .data import Example, encode_conversation, read_rows

DTYPES = {"float32": "float32", "bfloat16": "bfloat16", "float16": "float16"}


def _lr_factor(config: SFTConfig, step: int) -> float:
    if config.warmup_steps and step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    if config.lr_scheduler == "constant":
        return 1.0
    span = max(1, config.max_steps - config.warmup_steps)
    done = min(1.0, (step - config.warmup_steps) / span)
    return 1.0 - done if config.lr_scheduler == "linear" else 0.5 * (1 + math.cos(math.pi * done))


def load_examples(config: SFTConfig, tokenizer: Any) -> list[Example]:
    rows = read_rows(config.data)
    examples = [encode_conversation(tokenizer, r["messages"], r["tools"], config.template_kwargs, config.max_seq_len) for r in rows]
    examples = [e for e in examples if any(e.mask)]
    if not examples:
        raise ValueError(f"{config.data}: no conversation keeps an assistant token within max_seq_len = {config.max_seq_len}")
    return examples


def masked_loss(model: Any, batch: list[Example], pad_id: int, device: Any) -> Any:
    """Mean cross-entropy over the tokens whose mask is 1 (labels -100 elsewhere)."""
    import torch  # noqa: PLC0415

    width = max(len(e.input_ids) for e in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for i, e in enumerate(batch):
        n = len(e.input_ids)
        input_ids[i, :n] = torch.tensor(e.input_ids)
        attention[i, :n] = 1
        labels[i, :n] = torch.tensor([t if keep else -100 for t, keep in zip(e.input_ids, e.mask)])
    return model(input_ids=input_ids.to(device), attention_mask=attention.to(device), labels=labels.to(device)).loss


class SFTTrainer:
    """Loads the model, tokenises the data once, trains ``max_steps`` steps and saves the result.

    Each optimiser step draws ``batch_size × gradient_accumulation_steps`` conversations from
    a shuffled pass over the data (a new shuffle each epoch), so short runs see every row once
    before any row twice."""

    def __init__(self, config: SFTConfig, *, model: Any = None, tokenizer: Any = None) -> None:
        import torch  # noqa: PLC0415
        from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

        self.config = config.validate()
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        self.device = torch.device("cuda" if config.device == "auto" and torch.cuda.is_available() else ("cpu" if config.device == "auto" else config.device))
        path = os.path.expanduser(config.model)
        self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(path)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        model = model or AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, DTYPES[config.dtype]))
        if config.use_lora:
            from peft import LoraConfig, get_peft_model  # noqa: PLC0415

            model = get_peft_model(model, LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout, target_modules=config.lora_target_modules, task_type="CAUSAL_LM"))
        if config.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        self.model = model.to(self.device)
        self.examples = load_examples(config, self.tokenizer)
        self.output_dir = Path(config.output_dir).expanduser()

    def _batches(self, rng: random.Random):
        order: list[int] = []
        while True:
            if not order:
                order = list(range(len(self.examples)))
                rng.shuffle(order)
            take, order = order[: self.config.batch_size], order[self.config.batch_size :]
            yield [self.examples[i] for i in take]

    def train(self, log=print) -> list[dict[str, Any]]:
        import torch  # noqa: PLC0415

        c = self.config
        params = [p for p in self.model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=c.learning_rate, weight_decay=c.weight_decay)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _lr_factor(c, s))
        pad = self.tokenizer.pad_token_id
        batches = self._batches(random.Random(c.seed))
        self.output_dir.mkdir(parents=True, exist_ok=True)
        log_path = Path(c.log_file).expanduser() if c.log_file else self.output_dir / "metrics.jsonl"
        history: list[dict[str, Any]] = []
        self.model.train()
        with log_path.open("w", encoding="utf-8") as metrics_file:
            for step in range(1, c.max_steps + 1):
                started = time.monotonic()
                total, tokens = 0.0, 0
                for _ in range(c.gradient_accumulation_steps):
                    batch = next(batches)
                    loss = masked_loss(self.model, batch, pad, self.device) / c.gradient_accumulation_steps
                    loss.backward()
                    total += float(loss.detach())
                    tokens += sum(sum(e.mask) for e in batch)
                grad_norm = float(torch.nn.utils.clip_grad_norm_(params, c.max_grad_norm))
                opt.step()
                sched.step()
                opt.zero_grad(set_to_none=True)
                row = {"step": step, "loss": total, "grad_norm": grad_norm, "lr": sched.get_last_lr()[0], "trained_tokens": tokens, "seconds": time.monotonic() - started}
                history.append(row)
                metrics_file.write(json.dumps(row) + "\n")
                metrics_file.flush()
                log(f"sft step {step}/{c.max_steps}: loss {total:.4f}, {tokens} tokens, {row['seconds']:.1f} s")
        self.model.eval()
        self.save()
        return history

    def save(self) -> Path:
        model = self.model
        if self.config.use_lora and self.config.merge_lora:
            model = model.merge_and_unload()
        model.save_pretrained(str(self.output_dir))
        self.tokenizer.save_pretrained(str(self.output_dir))
        (self.output_dir / "edgegym_sft_config.json").write_text(json.dumps(self.config.to_dict(), indent=2))
        return self.output_dir

"""The GRPO training loop: rollouts from edgegym, policy-gradient updates, weights pushed back."""

from __future__ import annotations

import copy
import math
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

import torch

from ..client import AsyncClient
from ..rollouts.collector import CollectorSettings, RolloutCollector
from ..rollouts.generator import Generator, SamplingParams
from ..rollouts.types import Rollout, RolloutGroup
from .batching import collate, token_logps
from .checkpoint import find_latest_checkpoint, load_trainer_state, save_checkpoint
from .config import GRPOConfig
from .loss import LossSettings, importance_weights, policy_loss
from .metrics_log import MetricsLogger
from .pipeline import GeneratedBatch, RolloutPipeline, TaskSampler
from .weight_sync import InProcessSync, NoSync, VLLMLoraSync, VLLMNcclSync, WeightSync

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _lr_lambda(config: GRPOConfig):
    def f(step: int) -> float:
        if config.warmup_steps and step < config.warmup_steps:
            return (step + 1) / (config.warmup_steps + 1)
        if config.lr_scheduler == "constant":
            return 1.0
        span = max(1, config.max_steps - config.warmup_steps)
        progress = min(1.0, (step - config.warmup_steps) / span)
        if config.lr_scheduler == "linear":
            return max(0.0, 1.0 - progress)
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return f


def _seat_metrics(rollouts: list[Rollout]) -> dict[str, Any]:
    """A seated environment's figures per seat: ``seat/<seat>/reward_mean``, its rollouts and
    failures, and the mean of each metric its score reports (tic-tac-toe: win, draw, loss)."""
    out: dict[str, Any] = {}
    for seat in sorted({r.seat for r in rollouts if r.seat is not None}):
        mine = [r for r in rollouts if r.seat == seat]
        ok = [r for r in mine if r.ok]
        out[f"seat/{seat}/rollouts"] = len(mine)
        out[f"seat/{seat}/failed"] = len(mine) - len(ok)
        out[f"seat/{seat}/reward_mean"] = statistics.fmean([float(r.reward) for r in ok]) if ok else float("nan")  # type: ignore[arg-type]
        for name in sorted({n for r in ok for n in r.metrics}):
            out[f"seat/{seat}/{name}"] = statistics.fmean([r.metrics.get(name, 0.0) for r in ok])
    return out


class GRPOTrainer:
    """Trains ``config.model`` on ``config.env_id`` with GRPO.

    A seated environment (``config.seats``) is played by this one model in every client
    seat; the rollouts of the seats that are client-played and trainable are trained on
    together, each seat's group advantages computed from its own reward.

    Pass ``model`` / ``tokenizer`` / ``generator`` to use objects you built (tests and
    notebooks do); otherwise they are loaded from the config. Call ``train()``.
    """

    def __init__(self, config: GRPOConfig, *, model: Any = None, tokenizer: Any = None, generator: Generator | None = None, weight_sync: WeightSync | None = None) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

        self.config = config.validate()
        if config.backend == "vllm" and generator is None:
            # Before the model loads (minutes for a large one): a wrong vLLM launch fails now, with the fix.
            from .vllm_preflight import check_vllm_server  # noqa: PLC0415

            check_vllm_server(config.vllm_url, config.vllm_model or config.model, config.resolved_weight_sync)
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        self.output_dir = Path(config.output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.device = torch.device("cuda" if config.device == "auto" and torch.cuda.is_available() else ("cpu" if config.device == "auto" else config.device))
        dtype = DTYPES[config.dtype]

        resume_dir = None
        if config.resume_from_checkpoint:
            resume_dir = find_latest_checkpoint(self.output_dir) if config.resume_from_checkpoint == "latest" else Path(config.resume_from_checkpoint)
            if resume_dir is None:
                raise FileNotFoundError(f"resume_from_checkpoint = 'latest' but {self.output_dir} holds no checkpoint-* directory")

        # "~/…" in a config names a directory under the home directory (Hugging Face ids never start with "~").
        model_path = os.path.expanduser(config.model)
        self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(os.path.expanduser(config.tokenizer or config.model))
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if model is None:
            source = resume_dir if (resume_dir is not None and not config.use_lora) else model_path
            model = AutoModelForCausalLM.from_pretrained(str(source), dtype=dtype)
        elif resume_dir is not None and not config.use_lora:
            model = AutoModelForCausalLM.from_pretrained(str(resume_dir), dtype=dtype)
        self.ref_model = None
        if config.beta != 0.0 and not config.use_lora:
            self.ref_model = copy.deepcopy(model).to(self.device).eval()
            for p in self.ref_model.parameters():
                p.requires_grad_(False)
        if config.use_lora:
            from peft import LoraConfig, PeftModel, get_peft_model  # noqa: PLC0415

            if resume_dir is not None:
                model = PeftModel.from_pretrained(model, str(resume_dir), is_trainable=True)
            else:
                model = get_peft_model(
                    model,
                    LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout, target_modules=config.lora_target_modules, task_type="CAUSAL_LM"),
                )
        if config.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        self.model = model.to(self.device)
        self.model.train()
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=config.learning_rate, betas=(config.adam_beta1, config.adam_beta2), weight_decay=config.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, _lr_lambda(config))
        self.version = 0
        if resume_dir is not None:
            self.version = load_trainer_state(resume_dir, self.optimizer, self.scheduler)

        self.generator, self.weight_sync = self._generation(generator, weight_sync)
        self.loss_settings = LossSettings(
            loss_type=config.loss_type,
            epsilon=config.epsilon,
            epsilon_high=config.epsilon_high,
            delta=config.delta,
            beta=config.beta,
            max_completion_length=config.max_seq_len,
        )
        self.history: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ setup
    def _generation(self, generator: Generator | None, weight_sync: WeightSync | None) -> tuple[Generator, WeightSync]:
        c = self.config
        if c.backend == "transformers":
            if generator is None:
                from ..rollouts.transformers_generator import TransformersGenerator  # noqa: PLC0415

                # Overlapped generation needs its own copy: training changes the weights meanwhile.
                gen_model = self.model if c.num_batches_ahead == 0 else copy.deepcopy(self.model).eval()
                generator = TransformersGenerator(gen_model, self.tokenizer)
            return generator, weight_sync or InProcessSync(generator)
        if generator is None:
            from ..rollouts.vllm_generator import VLLMGenerator  # noqa: PLC0415

            generator = VLLMGenerator(c.vllm_url, c.vllm_model or c.model)
        if weight_sync is None:
            sync = c.resolved_weight_sync
            if sync == "lora":
                weight_sync = VLLMLoraSync(c.vllm_url, generator, self.output_dir / "adapters", keep=c.num_batches_ahead + 2)
            elif sync == "nccl":
                weight_sync = VLLMNcclSync(c.vllm_url, self.model, master_address=c.nccl_master_address, master_port=c.nccl_master_port)
            else:
                weight_sync = NoSync()
        return generator, weight_sync

    # ------------------------------------------------------------------ generation side
    def _pipeline(self) -> RolloutPipeline:
        c = self.config
        state: dict[str, Any] = {}

        async def start() -> None:
            gym = AsyncClient(c.server_url, api_key=c.server_api_key or os.environ.get("EDGEGYM_API_KEY"))
            info = await gym.env(c.env_id)
            size = info.splits.train if c.split == "train" else info.splits.eval
            state["gym"] = gym
            state["size"] = size
            state["collector"] = RolloutCollector(
                gym,
                self.generator,
                self.tokenizer,
                CollectorSettings(
                    sampling=SamplingParams(max_tokens=c.max_tokens, temperature=c.temperature, top_p=c.top_p, top_k=c.top_k),
                    max_concurrency=c.max_concurrency,
                    max_seq_len=c.max_seq_len,
                    env_args=c.env_args or None,
                    scale_rewards=c.scale_rewards,
                    seats=c.seats or None,
                ),
                policy_version=lambda: self.version,
            )

        async def stop() -> None:
            if "gym" in state:
                await state["gym"].aclose()

        async def produce(step: int) -> list[RolloutGroup]:
            sampler = TaskSampler(state["size"], c.split, c.seed, position=step * c.tasks_per_step)
            return await state["collector"].collect(c.env_id, sampler.next(c.tasks_per_step), c.num_generations)

        return RolloutPipeline(produce, num_batches_ahead=c.num_batches_ahead, first_step=self.version, policy_version=lambda: self.version, on_loop_start=start, on_loop_stop=stop)

    # ------------------------------------------------------------------ training side
    def _ref_logps(self, batch: Any) -> torch.Tensor | None:
        if self.config.beta == 0.0:
            return None
        with torch.no_grad():
            if self.ref_model is not None:
                return token_logps(self.ref_model, batch, self.config.temperature)
            with self.model.disable_adapter():  # LoRA: the base model is the reference
                return token_logps(self.model, batch, self.config.temperature)

    def train_on(self, rollouts: list[Rollout]) -> dict[str, float]:
        """One optimizer step on ``rollouts`` (advantages already set). Returns its metrics."""
        c = self.config
        pad = int(self.tokenizer.pad_token_id)
        k = min(c.gradient_accumulation_steps, len(rollouts))
        chunks = [rollouts[i::k] for i in range(k)]
        batches = [collate(ch, pad).to(self.device) for ch in chunks]
        window = float(sum(float(b.loss_mask(c.mask_truncated_completions).sum()) for b in batches))
        stats: dict[str, list[float]] = {"loss": [], "kl": [], "clip_fraction": [], "ratio": [], "is_ratio": []}
        self.model.train()
        for b in batches:
            mask = b.loss_mask(c.mask_truncated_completions)
            logps = token_logps(self.model, b, c.temperature)
            # One update per batch: the policy before this step is the current one (TRL, num_iterations = 1).
            old = logps.detach()
            is_ratio = None
            if c.importance_sampling:
                is_ratio = importance_weights(old, b.sampler_logps, mask, c.importance_sampling_mode, c.importance_sampling_cap)
                stats["is_ratio"].append(float(is_ratio.mean()))
            out = policy_loss(
                logps,
                old,
                b.advantages,
                mask,
                self.loss_settings,
                ref_logps=self._ref_logps(b),
                is_ratio=is_ratio,
                accumulation_steps=len(batches),
                tokens_in_window=window,
            )
            out.loss.backward()
            stats["loss"].append(out.policy_loss)
            stats["kl"].append(out.kl)
            stats["clip_fraction"].append(out.clip_fraction)
            stats["ratio"].append(out.mean_ratio)
        grad_norm = torch.nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.requires_grad], c.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.version += 1
        self._maybe_sync_ref()
        mean = lambda xs: float(sum(xs) / len(xs)) if xs else 0.0  # noqa: E731
        return {
            "loss": mean(stats["loss"]),
            "kl": mean(stats["kl"]),
            "clip_fraction": mean(stats["clip_fraction"]),
            "ratio_mean": mean(stats["ratio"]),
            "is_ratio_mean": mean(stats["is_ratio"]) if stats["is_ratio"] else 1.0,
            "grad_norm": float(grad_norm),
            "learning_rate": float(self.scheduler.get_last_lr()[0]),
        }

    def _maybe_sync_ref(self) -> None:
        c = self.config
        if not (c.sync_ref_model and self.ref_model is not None and self.version % c.ref_model_sync_steps == 0):
            return
        with torch.no_grad():
            for ref_p, p in zip(self.ref_model.parameters(), self.model.parameters()):
                ref_p.mul_(1 - c.ref_model_mixup_alpha).add_(p.detach(), alpha=c.ref_model_mixup_alpha)

    def _step_metrics(self, batch: GeneratedBatch, update: dict[str, float] | None, wall: float, train_s: float) -> dict[str, Any]:
        rollouts = [r for g in batch.groups for r in g.rollouts]
        ok = [r for r in rollouts if r.ok]
        rewards = [float(r.reward) for r in ok]  # type: ignore[arg-type]
        model_tokens = sum(r.model_tokens for r in ok)
        metrics: dict[str, Any] = {
            "step": self.version,
            "reward_mean": statistics.fmean(rewards) if rewards else float("nan"),
            "reward_std": statistics.pstdev(rewards) if len(rewards) > 1 else 0.0,
            "rollouts": len(rollouts),
            "failed": len(rollouts) - len(ok),
            "model_tokens": model_tokens,
            "completion_len_mean": statistics.fmean([r.model_tokens for r in ok]) if ok else 0.0,
            "turns_mean": statistics.fmean([r.turns for r in ok]) if ok else 0.0,
            "truncated_fraction": statistics.fmean([1.0 if r.completion_truncated else 0.0 for r in ok]) if ok else 0.0,
            "generation_seconds": batch.seconds,
            "train_seconds": train_s,
            "tokens_per_second": model_tokens / wall if wall > 0 else 0.0,
            "policy_lag": self.version - 1 - batch.policy_version if update else 0,
        }
        names = sorted({n for r in ok for n in r.components})
        for n in names:
            metrics[f"reward/{n}"] = statistics.fmean([r.components.get(n, 0.0) for r in ok])
        metrics.update(_seat_metrics(rollouts))
        errors = [r.error for r in rollouts if r.error]
        if errors:
            metrics["first_error"] = errors[0]
        if update:
            metrics.update(update)
        return metrics

    def train(self) -> list[dict[str, Any]]:
        c = self.config
        logger = MetricsLogger(
            c.log_file or self.output_dir / "metrics.jsonl",
            progress=c.progress,
            wandb_project=c.wandb_project,
            wandb_run_name=c.wandb_run_name,
            config=c.to_dict(),
            total_steps=c.max_steps,
        )
        if self.version > 0 or not isinstance(self.weight_sync, InProcessSync):
            # vLLM (or a resumed run) must generate with the weights we start from.
            self.weight_sync.push(self.model, self.version)
        pipeline = self._pipeline()
        pipeline.start(c.max_steps)
        last = time.monotonic()
        try:
            while self.version < c.max_steps:
                batch = pipeline.get()
                started = time.monotonic()
                ok = [r for g in batch.groups for r in g.rollouts if r.ok]
                update = None
                if ok:
                    update = self.train_on(ok)
                    self.weight_sync.push(self.model, self.version)
                    pipeline.notify_version()
                else:
                    logger.message(f"step {self.version}: every rollout failed, no update ({batch.groups[0].rollouts[0].error if batch.groups else ''})")
                    self.version += 1  # skip the batch so the run does not stall on a broken task
                    pipeline.notify_version()
                now = time.monotonic()
                metrics = self._step_metrics(batch, update, now - last, now - started)
                last = now
                self.history.append(metrics)
                logger.log(metrics)
                if c.save_steps and self.version % c.save_steps == 0 and self.version < c.max_steps:
                    save_checkpoint(self, self.output_dir, c.save_total_limit)
            save_checkpoint(self, self.output_dir, c.save_total_limit)
        finally:
            pipeline.stop()
            logger.close()
            self.weight_sync.close()
        return self.history

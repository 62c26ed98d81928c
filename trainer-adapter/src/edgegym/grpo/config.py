"""The trainer's settings: one dataclass, every field documented once (meaning, default, why).

Load it from TOML with ``GRPOConfig.from_toml(path)`` (top-level keys are field names;
unknown keys are errors). ``validate()`` lists every bad setting with how to fix it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .._config import ConfigError, Problems, TomlConfig

__all__ = ["ConfigError", "GRPOConfig", "defaults", "field_docs"]


@dataclass
class GRPOConfig(TomlConfig):
    # --- what to train on -------------------------------------------------------------
    #: Model to train: a local directory or a Hugging Face id already in the local cache (nothing is downloaded
    #: at run time unless your environment allows it). Required.
    model: str = ""
    #: Tokenizer to use; default: the model's. Its chat template renders prompts and environment turns.
    tokenizer: str | None = None
    #: edgegym server base URL.
    server_url: str = "http://127.0.0.1:8787"
    #: API key for the edgegym server (or set EDGEGYM_API_KEY).
    server_api_key: str | None = None
    #: Environment id to train on. Required.
    env_id: str = ""
    #: Environment arguments sent with every reset.
    env_args: dict[str, Any] = field(default_factory=dict)
    #: Dataset split the tasks come from.
    split: Literal["train", "eval"] = "train"
    #: A multi-player environment's seats (docs/multi-agent.md): who plays each, "client" (the model being trained) or
    #: one of the environment's policies, e.g. {o = "minimax"}; seats left out take the environment's default
    #: (tic-tac-toe-2p: both client, self-play). Every client seat is played by the one model, and the seats that are
    #: client-played and trainable are trained, each grouped on its own (x with x, o with o) for the advantages.
    seats: dict[str, str] = field(default_factory=dict)

    # --- generation -------------------------------------------------------------------
    #: "vllm" (a vLLM server, GPUs) or "transformers" (in-process, CPU or one small GPU).
    backend: Literal["vllm", "transformers"] = "transformers"
    #: vLLM server base URL (backend "vllm").
    vllm_url: str = "http://127.0.0.1:8000"
    #: Served model name on vLLM (the --served-model-name, default the model path you served).
    vllm_model: str | None = None
    #: How new weights reach vLLM after each optimizer step: "lora" (save the adapter, /v1/load_lora_adapter under a
    #: new name per version), "nccl" (full weights over vLLM's weight-transfer engine), "none" (never; for evaluation
    #: or debugging only: generation stays on the initial weights). "auto": lora with use_lora, else nccl.
    weight_sync: Literal["auto", "lora", "nccl", "none"] = "auto"
    #: NCCL rendezvous for weight_sync "nccl": address and port the trainer (rank 0) listens on.
    nccl_master_address: str = "127.0.0.1"
    #: NCCL rendezvous port (the trainer listens on it; TRL uses 51216 too).
    nccl_master_port: int = 51216
    #: Sampling temperature. 1.0 keeps the logprobs of the sampler and the trainer comparable; lower it for peaky tasks.
    temperature: float = 1.0
    #: Nucleus sampling; 1.0 keeps the full distribution (the importance weights stay meaningful).
    top_p: float = 1.0
    #: 0 turns top-k off.
    top_k: int = 0
    #: Most tokens one assistant turn may generate.
    max_tokens: int = 512
    #: Prompt + completion tokens an episode may reach (all turns); the episode is truncated there.
    max_seq_len: int = 4096
    #: Episodes in flight at once against the edgegym server and the model.
    max_concurrency: int = 64
    #: Batches generated ahead of training: 1 overlaps generation of step n+1 with training on step n (one step
    #: off-policy, corrected by importance weights); 0 is synchronous (on-policy, slower; use it to debug).
    num_batches_ahead: int = 1

    # --- batch ------------------------------------------------------------------------
    #: Rollouts per task (the GRPO group). Larger groups give more reward diversity per task.
    num_generations: int = 8
    #: Tasks per optimizer step; the step trains on tasks_per_step × num_generations rollouts.
    tasks_per_step: int = 8
    #: Micro-batches per optimizer step (the rollouts are split evenly); raise it when a step does not fit in memory.
    gradient_accumulation_steps: int = 1
    #: Optimizer steps to run.
    max_steps: int = 200

    # --- optimisation -----------------------------------------------------------------
    #: AdamW learning rate. 1e-6 is a conservative start for full fine-tuning; LoRA usually wants ~1e-5 to 1e-4.
    learning_rate: float = 1e-6
    #: AdamW weight decay; 0 as in TRL, RL updates are small and regularised by clipping and KL instead.
    weight_decay: float = 0.0
    #: AdamW first-moment decay.
    adam_beta1: float = 0.9
    #: AdamW second-moment decay; 0.99 (rather than 0.999) adapts faster to the shifting RL gradient scale.
    adam_beta2: float = 0.99
    #: Linear warm-up steps (10-20 keeps early updates small while advantages are noisy).
    warmup_steps: int = 10
    #: After warm-up: "constant", "linear" (to 0 at max_steps) or "cosine".
    lr_scheduler: Literal["constant", "linear", "cosine"] = "constant"
    #: Gradient norm clip; 1.0 is TRL's default, verifiers suggests much lower (0.01–0.1) for stability.
    max_grad_norm: float = 1.0
    #: Parameter dtype for training: "float32" (CPU, exact) or "bfloat16" (GPU).
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    #: "auto" picks cuda when available, else cpu.
    device: str = "auto"
    #: Trade compute for memory on long sequences.
    gradient_checkpointing: bool = False

    # --- GRPO loss (definitions as TRL v1.16 GRPOTrainer) ----------------------------------
    #: "dapo" (token-level mean over the accumulated batch; TRL's default), "dr_grpo" (sum / (sequences ×
    #: max_tokens); no length bias) or "grpo" (per-sequence mean, then mean; length-biased).
    loss_type: Literal["grpo", "dr_grpo", "dapo"] = "dapo"
    #: Lower clipping bound: ratios below 1-epsilon stop pushing down.
    epsilon: float = 0.2
    #: Upper clipping bound; default epsilon. DAPO recommends 0.28 ("clip-higher") to keep exploration alive.
    epsilon_high: float | None = None
    #: Two-sided clipping: caps the ratio at delta for negative advantages too (INTELLECT-2); must exceed 1+epsilon.
    delta: float | None = None
    #: KL coefficient to the reference model. 0 drops the reference model (less memory, faster); 0.001–0.04 is common.
    beta: float = 0.0
    #: Refresh the reference model from the policy every ref_model_sync_steps (TR-DPO style mixing by alpha).
    sync_ref_model: bool = False
    #: Optimizer steps between reference syncs (verifiers suggests ~100 for runs of 500+ steps).
    ref_model_sync_steps: int = 100
    #: ref ← alpha · policy + (1 − alpha) · ref at each sync.
    ref_model_mixup_alpha: float = 0.6
    #: Advantage scaling: "group" (divide by the group's std, GRPO), "batch" (by the batch std), "none" (Dr. GRPO).
    scale_rewards: Literal["group", "batch", "none"] = "group"
    #: Leave rollouts whose last turn hit max_tokens or the context limit out of the loss (DAPO's overlong filtering).
    mask_truncated_completions: bool = False
    #: Correct for tokens sampled by another engine or an older policy (importance weight trainer/sampler logprob).
    importance_sampling: bool = True
    #: "sequence_mask" drops sequences whose ratio passes the cap (TRL's default); "token_truncate" clamps per token, ….
    importance_sampling_mode: Literal["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"] = "sequence_mask"
    #: Cap of the importance weight (TRL's default 3.0).
    importance_sampling_cap: float = 3.0

    # --- LoRA -------------------------------------------------------------------------
    #: Train a LoRA adapter (peft) instead of all weights; the reference model is then the base (adapter off).
    use_lora: bool = False
    #: LoRA rank: 16 is a common start; higher ranks learn more at more memory.
    lora_r: int = 16
    #: LoRA scaling numerator (the update is scaled by alpha / r); 2 × r is customary.
    lora_alpha: int = 32
    #: LoRA dropout; 0 keeps the policy the trainer scores identical to the one vLLM samples from.
    lora_dropout: float = 0.0
    #: Modules to adapt; "all-linear" adapts every linear layer but the output head.
    lora_target_modules: list[str] | str = "all-linear"

    # --- output, checkpoints, logging ----------------------------------------------------------------
    #: Checkpoints, metrics and (LoRA sync) adapter versions go here.
    output_dir: str = "outputs/edgegym-grpo"
    #: Save a checkpoint every save_steps optimizer steps (0: only at the end).
    save_steps: int = 50
    #: Keep at most this many checkpoints (oldest removed); 0 keeps all.
    save_total_limit: int = 2
    #: Resume from a checkpoint directory, or "latest" for the newest in output_dir.
    resume_from_checkpoint: str | None = None
    #: JSONL metrics file; default <output_dir>/metrics.jsonl.
    log_file: str | None = None
    #: Log to Weights & Biases under this project (needs `pip install wandb`).
    wandb_project: str | None = None
    #: Weights & Biases run name (default: generated by wandb).
    wandb_run_name: str | None = None
    #: Console display: "rich" (a live table), "plain" (one line a step) or "none".
    progress: Literal["rich", "plain", "none"] = "plain"
    #: Seed of task order, sampling seeds and initialisation.
    seed: int = 0

    # ------------------------------------------------------------------------------------
    @property
    def rollouts_per_step(self) -> int:
        return self.num_generations * self.tasks_per_step

    @property
    def resolved_weight_sync(self) -> str:
        if self.weight_sync != "auto":
            return self.weight_sync
        return "lora" if self.use_lora else "nccl"

    def validate(self) -> "GRPOConfig":
        need = (problems := Problems()).need
        need(bool(self.model), "model is empty: set model = \"path/to/model\" (a local directory or a cached Hugging Face id)")
        need(bool(self.env_id), "env_id is empty: set env_id to an environment the server lists at GET /v1/envs")
        need(self.num_generations >= 2, f"num_generations = {self.num_generations}: GRPO compares rollouts of a task, use 2 or more (8–16 is usual)")
        need(self.tasks_per_step >= 1, "tasks_per_step must be at least 1")
        need(self.gradient_accumulation_steps >= 1, "gradient_accumulation_steps must be at least 1")
        need(
            self.rollouts_per_step % max(1, self.gradient_accumulation_steps) == 0,
            f"tasks_per_step × num_generations = {self.rollouts_per_step} does not split into "
            f"{self.gradient_accumulation_steps} equal micro-batches: pick gradient_accumulation_steps dividing it",
        )
        need(self.max_steps >= 1, "max_steps must be at least 1")
        need(self.learning_rate > 0, "learning_rate must be positive")
        need(self.max_tokens >= 1, "max_tokens must be at least 1")
        need(self.max_seq_len > self.max_tokens, f"max_seq_len ({self.max_seq_len}) must exceed max_tokens ({self.max_tokens}) to leave room for the prompt")
        need(0 < self.epsilon < 1, f"epsilon = {self.epsilon}: use a value in (0, 1), 0.2 is standard")
        need(self.epsilon_high is None or self.epsilon_high > 0, "epsilon_high must be positive (DAPO uses 0.28) or unset")
        eps_high = self.epsilon_high if self.epsilon_high is not None else self.epsilon
        need(self.delta is None or self.delta > 1 + eps_high, f"delta = {self.delta} must be greater than 1 + epsilon_high = {1 + eps_high}, or unset")
        need(self.beta >= 0, "beta must be ≥ 0 (0 drops the reference model)")
        need(not (self.sync_ref_model and self.beta == 0), "sync_ref_model needs a reference model: set beta > 0, or sync_ref_model = false")
        need(0 < self.ref_model_mixup_alpha <= 1, "ref_model_mixup_alpha must be in (0, 1]")
        need(self.temperature > 0, f"temperature = {self.temperature}: GRPO needs sampling; use a temperature > 0 (1.0 keeps logprobs comparable)")
        need(0 < self.top_p <= 1, "top_p must be in (0, 1]")
        need(self.top_k >= 0, "top_k must be ≥ 0 (0 turns it off)")
        need(self.num_batches_ahead >= 0, "num_batches_ahead must be ≥ 0 (0 = synchronous)")
        need(self.max_concurrency >= 1, "max_concurrency must be at least 1")
        need(
            all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in self.seats.items()),
            f"seats = {self.seats!r}: map each seat to \"client\" or a policy name, e.g. seats = {{ o = \"minimax\" }}",
        )
        need(self.importance_sampling_cap > 1, "importance_sampling_cap must exceed 1 (TRL uses 3.0)")
        need(self.max_grad_norm > 0, "max_grad_norm must be positive")
        need(self.warmup_steps >= 0, "warmup_steps must be ≥ 0")
        need(self.save_steps >= 0, "save_steps must be ≥ 0 (0 saves only at the end)")
        need(self.lora_r >= 1 or not self.use_lora, "lora_r must be at least 1")
        sync = self.resolved_weight_sync
        need(
            not (self.backend == "vllm" and sync == "lora" and not self.use_lora),
            "weight_sync = \"lora\" needs use_lora = true (or use weight_sync = \"nccl\" for full weights)",
        )
        need(
            not (self.backend == "transformers" and sync == "lora" and self.weight_sync == "lora"),
            "weight_sync = \"lora\" is for the vllm backend; the transformers backend copies weights in process (leave weight_sync = \"auto\")",
        )
        need(self.backend != "vllm" or bool(self.vllm_url), "backend = \"vllm\" needs vllm_url")
        problems.raise_any()
        return self


def field_docs() -> dict[str, str]:
    """Each field's documentation comment (the ``#:`` lines above it), for the CLI's --help-config.
    Generated data (``_field_docs.py``), so it works where the package ships without sources."""
    from ._field_docs import FIELD_DOCS  # noqa: PLC0415

    return dict(FIELD_DOCS)


def defaults() -> dict[str, Any]:
    return GRPOConfig.defaults()

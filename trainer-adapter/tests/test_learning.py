"""A short CPU run of the GRPO trainer raises the mean reward on a learnable environment.

The model is the tiny warmed-up Llama (it answers A, B, C or D about equally often);
the environment (letter-a, served by the real server) rewards A. The trainer loads the
model by path as a user's run would, generates in process, overlaps generation with
training (num_batches_ahead = 1) and writes checkpoints and JSONL metrics.
"""

from __future__ import annotations

import json
import statistics

from edgegym.grpo import GRPOConfig, GRPOTrainer

from .support.letter_a_run import letter_a_config


def test_grpo_raises_reward_and_resumes(server, warm_model_dir, tmp_path):
    out = tmp_path / "run"
    config = letter_a_config(
        warm_model_dir,
        server.url,
        out,
        backend="transformers",
        gradient_accumulation_steps=2,
        max_steps=14,
        learning_rate=3e-3,
        warmup_steps=1,
        save_steps=7,
        save_total_limit=1,
    )
    history = GRPOTrainer(config).train()
    assert [h["step"] for h in history] == list(range(1, 15))
    assert all(h["failed"] == 0 for h in history)
    first = statistics.fmean(h["reward_mean"] for h in history[:3])
    last = statistics.fmean(h["reward_mean"] for h in history[-3:])
    print(f"reward: first three steps {first:.3f}, last three {last:.3f}")
    assert last > first + 0.2, f"mean reward did not rise: {first:.3f} -> {last:.3f}"
    # One step off-policy: every batch after the first was generated one version behind.
    assert all(h["policy_lag"] in (0, 1) for h in history)

    lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(lines) == 14 and {"reward_mean", "loss", "kl", "clip_fraction", "tokens_per_second"} <= set(lines[0])
    checkpoints = sorted(p.name for p in out.glob("checkpoint-*"))
    assert checkpoints == ["checkpoint-14"]

    # Resume: two more steps continue the step count from the checkpoint.
    config.max_steps = 16
    config.resume_from_checkpoint = "latest"
    resumed = GRPOTrainer(config)
    assert resumed.version == 14
    more = resumed.train()
    assert [h["step"] for h in more] == [15, 16]


def test_lora_with_kl_to_the_base_model(server, warm_model_dir, tmp_path):
    """LoRA training with beta > 0: the reference is the base model (adapter disabled), only
    adapter weights change, and the KL grows from 0 once the adapter moves."""
    import torch
    from safetensors.torch import load_file

    config = GRPOConfig(
        model=str(warm_model_dir),
        server_url=server.url,
        env_id="letter-a",
        use_lora=True,
        lora_r=4,
        lora_alpha=8,
        beta=0.05,
        loss_type="grpo",
        epsilon_high=0.28,
        num_generations=4,
        tasks_per_step=2,
        max_steps=3,
        learning_rate=5e-3,
        warmup_steps=0,
        max_tokens=3,
        max_seq_len=96,
        output_dir=str(tmp_path / "lora"),
        save_steps=0,
        progress="none",
    )
    trainer = GRPOTrainer(config)
    base_before = {k: v.clone() for k, v in trainer.model.get_base_model().state_dict().items() if "lora_" not in k}
    history = trainer.train()
    assert [h["step"] for h in history] == [1, 2, 3]
    assert history[0]["kl"] == 0.0 and history[-1]["kl"] > 0.0
    base_after = {k: v for k, v in trainer.model.get_base_model().state_dict().items() if "lora_" not in k}
    assert all(torch.equal(base_before[k], base_after[k]) for k in base_before)
    adapter = load_file(str(tmp_path / "lora" / "checkpoint-3" / "adapter_model.safetensors"))
    assert adapter and all("lora_" in k for k in adapter)

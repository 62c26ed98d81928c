"""TRL's real GRPOTrainer (from PyPI) training two steps on CPU with edgegym rollouts."""

from __future__ import annotations

import os

import pytest

trl = pytest.importorskip("trl")

from support.trl_args import tiny_trl_args  # noqa: E402


def test_trl_grpo_trainer_with_edgegym_rollout_func(server, warm_model_dir, tokenizer, tmp_path):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from transformers import AutoModelForCausalLM
    from trl import GRPOTrainer

    from edgegym.trl import EdgegymRolloutFunc, component_reward, edgegym_dataset, edgegym_reward

    dataset = edgegym_dataset(server.url, "guess-number", n=8)
    rollout_func = EdgegymRolloutFunc(server.url, "guess-number", max_seq_len=256)
    args = tiny_trl_args(tmp_path / "trl", max_completion_length=6, reward_weights=[1.0, 0.0])
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(warm_model_dir),
        reward_funcs=[edgegym_reward, component_reward("guesses")],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=rollout_func,
    )
    trainer.train()
    assert trainer.state.global_step == 2
    logged = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logged) == 2
    assert all("rewards/edgegym_reward/mean" in h and "rewards/edgegym_guesses/mean" in h for h in logged)
    # The last batch: multi-turn episodes whose environment tokens were masked out of the loss.
    rollouts = rollout_func.last_rollouts
    assert len(rollouts) == 4 and all(r.ok for r in rollouts)
    assert any(0 in r.env_mask for r in rollouts), "expected at least one multi-turn episode in the batch"
    # TRL counted only model tokens as completion length (env_mask honoured).
    lengths = [h["completions/mean_length"] for h in logged]
    assert lengths[-1] == pytest.approx(sum(sum(r.env_mask) for r in rollouts) / 4)


def test_two_trainers_in_one_process_keep_their_tasks_apart(server, warm_model_dir, tokenizer, tmp_path):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from edgegym.trl import EdgegymRolloutFunc, edgegym_dataset, edgegym_reward

    def trainer_on(env_id: str, name: str):
        dataset = edgegym_dataset(server.url, env_id, n=4)
        func = EdgegymRolloutFunc(server.url, env_id, max_seq_len=256)
        args = GRPOConfig(output_dir=str(tmp_path / name), per_device_train_batch_size=4, num_generations=4, max_completion_length=6, max_steps=1, report_to="none", use_cpu=True, bf16=False, save_strategy="no")
        trainer = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(warm_model_dir), reward_funcs=[edgegym_reward], args=args, train_dataset=dataset, processing_class=tokenizer, rollout_func=func)
        return dataset, func, trainer

    letters, letters_func, letters_trainer = trainer_on("letter-a", "a")
    guesses, guesses_func, guesses_trainer = trainer_on("guess-number", "b")
    # Each rollout function knows its own trainer's prompts, and only those.
    letters_tasks = letters_func._tasks(letters_trainer)
    guesses_tasks = guesses_func._tasks(guesses_trainer)
    assert all(row["prompt"] in letters_tasks for row in letters) and not any(row["prompt"] in letters_tasks for row in guesses)
    assert all(row["prompt"] in guesses_tasks for row in guesses) and not any(row["prompt"] in guesses_tasks for row in letters)
    assert letters_tasks.get(letters[2]["prompt"]).split == "train"
    assert guesses_tasks.get(guesses[2]["prompt"]).split == "train"
    # A prompt of the other trainer's dataset is refused before any episode starts.
    with pytest.raises(KeyError, match="not in this trainer's datasets"):
        letters_func([guesses[0]["prompt"]] * 4, letters_trainer)
    # Building a third dataset does not change what the first two know.
    assert len(letters_func._tasks(letters_trainer)) == len(letters_tasks) > 0
    assert not any(row["prompt"] in letters_tasks for row in edgegym_dataset(server.url, "calculator", n=4))

"""The tic-tac-toe recipe end to end at CI size: generate -> SFT -> GRPO, measured on held-out games.

The same path as docs/training.md's SmolLM2 run, with a tiny random Llama (nothing downloaded):
``edgegym generate`` plays games with the built-in minimax expert and keeps the won and drawn
ones; ``edgegym-train sft`` fine-tunes on them with the completion-only loss; a few GRPO steps
follow against the real server; ``edgegym.recipes.tic_tac_toe`` measures each stage on the same
held-out games. The untrained model writes no legal move (invalid-move rate 1.0, every game
forfeited); the assertions are that the invalid-move rate falls and the score against the random
opponent rises. The figures are printed (pytest -s) for the record.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch

from edgegym.grpo import GRPOConfig, GRPOTrainer
from edgegym.recipes.tic_tac_toe import evaluate, format_row
from edgegym.sft import SFTConfig, SFTTrainer

from support.server import REPO, node_binary
from support.tiny_model import CORPUS, build_model, build_tokenizer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GAMES = 24
MAX_TOKENS = 10  # "<move>N</move>" is about 7 tokens of the tokenizer trained below, then the end of turn
# A 64-wide, 2-layer model learns the format and the openings from 60 SFT steps but reads the board
# poorly, so greedy decoding repeats a taken cell and forfeits. It is measured as it would be
# trained, by sampling (temperature 1, seeded), with 5 invalid moves allowed before a forfeit:
# measured here, invalid-move rate 1.00 -> 0.51 and score against random 0.00 -> 0.15 after SFT.
EVAL = {"max_tokens": MAX_TOKENS, "max_seq_len": 1024, "temperature": 1.0, "env_args": {"max_invalid_moves": 5}}


def generate(out: Path, games: int, env_args: dict) -> Path:
    cmd = [node_binary(), str(REPO / "bin" / "edgegym.js"), "generate", "tic-tac-toe", "--expert", "builtin", "-n", str(games), "--min-reward", "0.5", "--env-args", json.dumps(env_args), "-o", str(out)]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


def measure(label: str, model_dir: Path, server_url: str) -> dict:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    torch.manual_seed(0)
    result = evaluate(model, tokenizer, server_url, games=GAMES, opponents=("random",), **EVAL)
    print(format_row(label, result))
    return result


def test_generate_sft_grpo_lowers_invalid_moves_and_raises_the_score(server, tmp_path):
    data = generate(tmp_path / "sft.jsonl", 120, {"opponent": "random"})
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(rows) >= 100 and rows[0]["messages"][0]["role"] == "system"

    # A byte-level BPE learnt from the games' own text: boards and moves become a few tokens each.
    tokenizer = build_tokenizer(vocab_size=600, corpus=CORPUS + [m["content"] for r in rows[:60] for m in r["messages"]])
    base = tmp_path / "base"
    model = build_model(tokenizer)
    model.save_pretrained(base)
    tokenizer.save_pretrained(base)
    before = measure("base", base, server.url)

    sft_dir = tmp_path / "sft"
    sft = SFTTrainer(SFTConfig(model=str(base), data=str(data), output_dir=str(sft_dir), max_steps=60, batch_size=16, learning_rate=3e-3, warmup_steps=5, use_lora=False, max_seq_len=1024, seed=0))
    losses = [h["loss"] for h in sft.train(log=lambda _: None)]
    assert losses[-1] < losses[0] / 2, losses
    after_sft = measure("sft", sft_dir, server.url)

    grpo_dir = tmp_path / "grpo"
    history = GRPOTrainer(
        GRPOConfig(
            model=str(sft_dir),
            server_url=server.url,
            env_id="tic-tac-toe",
            env_args={"opponent": "minimax", "random_move_prob": 0.5, "max_invalid_moves": 5},  # the mixed opponent
            backend="transformers",
            num_generations=4,
            tasks_per_step=4,
            max_steps=3,
            learning_rate=2e-4,
            warmup_steps=0,
            max_tokens=MAX_TOKENS,
            max_seq_len=1024,
            temperature=1.0,
            num_batches_ahead=0,
            output_dir=str(grpo_dir),
            save_steps=0,
            progress="none",
            seed=0,
        )
    ).train()
    assert [h["step"] for h in history] == [1, 2, 3]
    assert all("reward/invalid_moves" in h for h in history)
    after_grpo = measure("grpo", grpo_dir / "checkpoint-3", server.url)

    assert before["invalid_rate"] > 0.9, "the untrained model should not write legal moves"
    assert after_sft["invalid_rate"] < before["invalid_rate"] - 0.25
    assert after_grpo["invalid_rate"] < before["invalid_rate"] - 0.25
    # Against the random opponent the score comes from a dozen games, and a stage with half its
    # moves still illegal sometimes wins none of them (seen in CI: sft 0.00, grpo 0.33; rerun:
    # 0.38, 0.17). The pipeline must raise it; each stage alone is too noisy to hold to that.
    assert max(after_sft["random"]["score"], after_grpo["random"]["score"]) > before["random"]["score"] + 0.04

    # The plot of the run, drawn from its metrics.jsonl by the script in the repository.
    png = tmp_path / "grpo.png"
    done = subprocess.run([sys.executable, str(EXAMPLES / "plot_metrics.py"), str(grpo_dir / "metrics.jsonl"), "-o", str(png)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

"""edgegym-train sft: data reading, the environment mask, config checks, and a short run that learns."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from edgegym.grpo.cli import main as train_main
from edgegym.grpo.config import ConfigError
from edgegym.recipes.stats import wilson
from edgegym.sft import SFTConfig, SFTTrainer, encode_conversation, read_rows

from support.tiny_model import build_model

GAME = [
    {"role": "system", "content": "Play tic-tac-toe."},
    {"role": "user", "content": "You play X. Your move."},
    {"role": "assistant", "content": "<move>5</move>"},
    {"role": "user", "content": "O played 1. Your move."},
    {"role": "assistant", "content": "<move>9</move>"},
    {"role": "user", "content": "You win!"},
]
TOOLS = [{"type": "function", "function": {"name": "add", "description": "Add.", "parameters": {"type": "object", "properties": {}}}}]


def test_the_loss_covers_exactly_what_the_model_writes(tokenizer):
    ex = encode_conversation(tokenizer, GAME)
    written = tokenizer.decode([t for t, m in zip(ex.input_ids, ex.mask) if m], skip_special_tokens=False)
    assert written == "<move>5</move><|im_end|><move>9</move><|im_end|>"
    # The prefix before each move is the prompt a rollout gives the model at that turn.
    first = ex.mask.index(1)
    assert ex.input_ids[:first] == tokenizer.apply_chat_template(GAME[:2], add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
    second = first + ex.mask[first:].index(0) + ex.mask[first + ex.mask[first:].index(0) :].index(1)
    assert tokenizer.decode(ex.input_ids[:second], skip_special_tokens=False) == tokenizer.apply_chat_template(GAME[:4], add_generation_prompt=True, tokenize=False)
    # The environment's last message after the final move is not trained on, nor kept.
    assert ex.mask[-1] == 1
    assert len(encode_conversation(tokenizer, GAME, max_len=10).input_ids) == 10
    with pytest.raises(ValueError, match="no assistant message"):
        encode_conversation(tokenizer, GAME[:2])


def test_reads_jsonl_and_parquet_with_tools(tmp_path):
    jsonl = tmp_path / "sft.jsonl"
    jsonl.write_text(json.dumps({"messages": GAME, "tools": TOOLS}) + "\n\n" + json.dumps({"messages": GAME}) + "\n")
    rows = read_rows(jsonl)
    assert rows[0]["tools"] == TOOLS and rows[1]["tools"] is None
    parquet = tmp_path / "sft.parquet"
    # As `edgegym generate --format parquet` writes it: tools as JSON text, absent fields null.
    pq.write_table(pa.table({"messages": [[{**m, "tool_call_id": None} for m in GAME]], "tools": [json.dumps(TOOLS)]}), parquet)
    assert read_rows(parquet) == [{"messages": GAME, "tools": TOOLS}]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": []}\n')
    with pytest.raises(ValueError, match="no `messages`"):
        read_rows(bad)
    bad.write_text("{not json\n")
    with pytest.raises(ValueError, match="bad.jsonl:1: not JSON"):
        read_rows(bad)


def test_config_checks_name_the_fix(tmp_path, capsys):
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        SFTConfig.from_dict({"learning_rat": 1e-4})
    with pytest.raises(ConfigError, match="data is empty"):
        SFTConfig(model="m").validate()
    toml = tmp_path / "sft.toml"
    toml.write_text('model = "m"\ndata = "d.jsonl"\nmax_steps = 0\n')
    assert train_main(["sft", "--config", str(toml)]) == 2
    assert "max_steps must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("use_lora", [False, True])
def test_a_short_run_learns_and_saves_a_loadable_model(tokenizer, tmp_path, use_lora):
    from transformers import AutoModelForCausalLM

    data = tmp_path / "sft.jsonl"
    data.write_text(json.dumps({"messages": GAME}) + "\n")
    base = tmp_path / "base"
    build_model(tokenizer).save_pretrained(base)
    tokenizer.save_pretrained(base)
    out = tmp_path / "out"
    trainer = SFTTrainer(SFTConfig(model=str(base), data=str(data), output_dir=str(out), max_steps=15, batch_size=1, learning_rate=1e-2 if use_lora else 3e-3, warmup_steps=0, use_lora=use_lora, lora_r=4, lora_alpha=8))
    history = trainer.train(log=lambda _: None)
    # Full fine-tuning fits one game quickly; rank-4 adapters on a random 64-wide model move slower.
    assert history[-1]["loss"] < (0.9 if use_lora else 0.5) * history[0]["loss"]
    assert [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()] == list(range(1, 16))
    # Merged LoRA or full weights: either way a plain model directory.
    assert AutoModelForCausalLM.from_pretrained(out) is not None
    assert not (out / "adapter_config.json").exists()


def test_wilson_interval():
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and 0.15 < hi < 0.17
    lo, hi = wilson(10, 20)
    assert 0.29 < lo < 0.3 and 0.7 < hi < 0.71
    assert wilson(0, 0) == (0.0, 1.0)

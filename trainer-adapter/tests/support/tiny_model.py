"""A tiny causal LM and tokenizer built in the test: nothing is downloaded.

The tokenizer is a byte-level BPE trained on a small corpus with ChatML-style special
tokens and a chat template that renders tools and Hermes-style tool calls. The model
is a randomly initialised Llama with tiny dimensions; ``warm_up`` trains it briefly on
transcripts (supervised, assistant tokens only) so it writes answers and tool calls
the way a small instruction-tuned model would, which reinforcement learning then
improves.
"""

from __future__ import annotations

import json
import random
from typing import Any, Sequence

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

CHAT_TEMPLATE = (
    "{%- set nl = '\\n' -%}"
    "{%- if tools -%}"
    "<|im_start|>system{{ nl }}"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content }}{{ nl }}{% endif -%}"
    "Tools:{% for t in tools %}{{ nl }}{{ t | tojson }}{% endfor %}{{ nl }}"
    "Call a tool as <tool_call>{\"name\": NAME, \"arguments\": ARGS}</tool_call><|im_end|>{{ nl }}"
    "{%- elif messages[0].role == 'system' -%}"
    "<|im_start|>system{{ nl }}{{ messages[0].content }}<|im_end|>{{ nl }}"
    "{%- endif -%}"
    "{%- for m in messages -%}"
    "{%- if not (loop.first and m.role == 'system') -%}"
    "<|im_start|>{{ m.role }}{{ nl }}"
    "{%- if m.content %}{{ m.content }}{% endif -%}"
    "{%- if m.tool_calls %}{% for c in m.tool_calls -%}"
    "<tool_call>{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}</tool_call>"
    "{%- endfor %}{% endif -%}"
    "<|im_end|>{{ nl }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt %}<|im_start|>assistant{{ nl }}{% endif -%}"
)

SPECIAL = ["<|pad|>", "<|im_start|>", "<|im_end|>"]

CORPUS = [
    "Pick one letter: A, B, C or D.",
    "A B C D A B C D",
    "Guess the secret number from 1 to 9. Answer with the number only.",
    "Your first guess? Higher. Lower. Correct! That is not a number. Guess again.",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18",
    "Use the add tool, then answer with the sum. What is 3 + 4? The sum is 7.",
    '<tool_call>{"name": "add", "arguments": {"a": 3, "b": 4}}</tool_call>',
    '{"type": "function", "function": {"name": "add", "description": "Add two integers.", "parameters": {"type": "object"}}}',
    "system user assistant tool Tools: Call a tool as NAME ARGS",
    "Reverse the text the user gives you, character by character. <answer> </answer> <think> </think>",
]


def build_tokenizer(vocab_size: int = 420, corpus: Sequence[str] | None = None) -> PreTrainedTokenizerFast:
    """``corpus``: text to learn the merges from (default: the test environments' own words)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(corpus or CORPUS) * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|pad|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_model(tokenizer: PreTrainedTokenizerFast, seed: int = 0, *, heads: int = 4, kv_heads: int = 2) -> LlamaForCausalLM:
    """``heads=2, kv_heads=1`` gives 32-wide attention heads, the narrowest vLLM's CPU
    attention backend runs (``CPUAttentionBackend.get_supported_head_sizes``)."""
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=1024,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def _render(tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Any = None, add_generation_prompt: bool = False) -> str:
    return tokenizer.apply_chat_template(list(messages), tools=tools, tokenize=False, add_generation_prompt=add_generation_prompt)


def transcript_ids(tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Any = None) -> tuple[list[int], list[int]]:
    """Token ids of a conversation up to its last assistant message, and a mask that is 1 on
    what the assistant writes (its content and end-of-turn marker)."""
    enc = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    ids: list[int] = []
    mask: list[int] = []
    covered = ""
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        prompt_text = _render(tokenizer, messages[:i], tools, add_generation_prompt=True)
        assert prompt_text.startswith(covered)
        context = enc(prompt_text[len(covered):])
        ids += context
        mask += [0] * len(context)
        full = _render(tokenizer, messages[: i + 1], tools)
        piece = full[len(prompt_text):]
        end = piece.rfind("<|im_end|>") + len("<|im_end|>")
        head, tail = enc(piece[:end]), enc(piece[end:])
        ids += head + tail
        mask += [1] * len(head) + [0] * len(tail)
        covered = full
    return ids, mask


def warm_up(model: LlamaForCausalLM, examples: list[tuple[list[int], list[int]]], steps: int = 150, lr: float = 3e-3, batch: int = 16, seed: int = 0) -> float:
    """Supervised training on (ids, mask) examples; returns the last loss."""
    rng = random.Random(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    pad = model.config.pad_token_id
    loss_value = float("nan")
    for _ in range(steps):
        chosen = [examples[rng.randrange(len(examples))] for _ in range(batch)]
        width = max(len(ids) for ids, _ in chosen)
        input_ids = torch.full((batch, width), pad, dtype=torch.long)
        labels = torch.full((batch, width), -100, dtype=torch.long)
        attention = torch.zeros((batch, width), dtype=torch.long)
        for i, (ids, mask) in enumerate(chosen):
            input_ids[i, : len(ids)] = torch.tensor(ids)
            attention[i, : len(ids)] = 1
            labels[i, : len(ids)] = torch.tensor([t if k else -100 for t, k in zip(ids, mask)])
        out = model(input_ids=input_ids, attention_mask=attention, labels=labels)
        out.loss.backward()
        opt.step()
        opt.zero_grad()
        loss_value = float(out.loss.detach())
    model.eval()
    return loss_value


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"

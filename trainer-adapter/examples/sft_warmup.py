"""A short supervised warm-up on an environment's own examples, so that GRPO has a reward to climb.

Why: GRPO learns from differences in reward between the rollouts of a task. SmolLM2-135M-Instruct,
as released, never writes the ``<answer>…</answer>`` tags the built-in environments parse (0 of 64
rollouts on reverse-text, measured here), so every reward is 0, every advantage is 0 and the
policy gradient is zero. verifiers recommends the same remedy for models under 7B (an SFT warm-up
before RL, its "Level 2.5"). This script fine-tunes on a few examples of the environment, served by
the edgegym server (``GET /v1/envs/{id}/examples``: the prompt the model sees and the reference
answer), with the reply written as ``<answer>{answer}</answer>``. The loss covers the reply tokens
only. A few dozen steps teach the format and a rough first attempt at the task; GRPO does the rest.

    python trainer-adapter/examples/sft_warmup.py --server http://127.0.0.1:8787   # reverse-text defaults

Only torch and transformers (the ``[train]`` extra) are used; the model is saved with
``save_pretrained`` next to the input (``<model>-<env>-sft``) unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_MODEL = Path.home() / ".cache/edgegym/models/SmolLM2-135M-Instruct"


def sft_examples(server_url: str, env_id: str, count: int, offset: int = 0) -> list[tuple[list[dict[str, Any]], str]]:
    """(prompt messages, reply text) pairs from the server's train split; tasks without an answer are skipped."""
    from edgegym import Client  # noqa: PLC0415
    from edgegym.models import message_dict  # noqa: PLC0415

    pairs: list[tuple[list[dict[str, Any]], str]] = []
    with Client(server_url) as gym:
        while len(pairs) < count:
            page = gym.examples(env_id, split="train", offset=offset, limit=min(50, count - len(pairs)))
            if not page.examples:
                break
            for ex in page.examples:
                if ex.answer is not None:
                    pairs.append(([message_dict(m) for m in ex.prompt], f"<answer>{ex.answer}</answer>"))
            offset += len(page.examples)
    if not pairs:
        raise SystemExit(f"sft_warmup: {env_id} served no examples with an answer")
    return pairs


def tokenize_pair(tokenizer: Any, prompt: list[dict[str, Any]], reply: str) -> tuple[list[int], list[int]]:
    """Token ids of prompt + reply as the chat template renders them, and a mask that is 1 on the reply.

    The prompt part is the template with the generation prompt, exactly what the rollout collector
    feeds the model; the reply part is what the template appends for the assistant turn (its end
    marker included, so the model learns to stop)."""
    prompt_ids = list(tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
    full_ids = list(tokenizer.apply_chat_template(prompt + [{"role": "assistant", "content": reply}], tokenize=True, return_dict=True)["input_ids"])
    if full_ids[: len(prompt_ids)] != prompt_ids:
        raise ValueError("the chat template renders the prompt differently once a reply follows; cannot mask the reply")
    return full_ids, [0] * len(prompt_ids) + [1] * (len(full_ids) - len(prompt_ids))


def warm_up(model: Any, tokenizer: Any, pairs: list[tuple[list[dict[str, Any]], str]], *, steps: int, batch_size: int, lr: float, seed: int = 0, log=print) -> list[float]:
    """AdamW on the reply tokens of randomly drawn pairs; returns the loss of every step."""
    import torch  # noqa: PLC0415

    rng = random.Random(seed)
    data = [tokenize_pair(tokenizer, p, r) for p, r in pairs]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    model.train()
    losses: list[float] = []
    for step in range(steps):
        started = time.monotonic()
        chosen = [data[rng.randrange(len(data))] for _ in range(batch_size)]
        width = max(len(ids) for ids, _ in chosen)
        input_ids = torch.full((batch_size, width), pad, dtype=torch.long)
        labels = torch.full((batch_size, width), -100, dtype=torch.long)
        attention = torch.zeros((batch_size, width), dtype=torch.long)
        for i, (ids, mask) in enumerate(chosen):
            input_ids[i, : len(ids)] = torch.tensor(ids)
            attention[i, : len(ids)] = 1
            labels[i, : len(ids)] = torch.tensor([t if keep else -100 for t, keep in zip(ids, mask)])
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        log(f"sft step {step + 1}/{steps}: loss {losses[-1]:.3f} ({time.monotonic() - started:.1f} s)")
    model.eval()
    return losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help=f"model directory (default: {DEFAULT_MODEL})")
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: <model>-<env>-sft)")
    parser.add_argument("--server", default="http://127.0.0.1:8787", help="edgegym server that serves the environment")
    parser.add_argument("--env", default="reverse-text", help="environment whose examples to learn from")
    parser.add_argument("--examples", type=int, default=32, help="examples taken from the train split (from offset 0)")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1 is fastest on a busy small machine)")
    args = parser.parse_args(argv)

    import torch  # noqa: PLC0415
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if not (args.model / "config.json").is_file():
        print(f"sft_warmup: {args.model} is not a model directory; run prepare_smollm2.py first", file=sys.stderr)
        return 2
    out = args.out or args.model.with_name(f"{args.model.name}-{args.env}-sft")
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    pairs = sft_examples(args.server, args.env, args.examples)
    started = time.monotonic()
    losses = warm_up(model, tokenizer, pairs, steps=args.steps, batch_size=args.batch_size, lr=args.lr)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    print(f"warm-up: {len(pairs)} examples of {args.env}, {args.steps} steps in {time.monotonic() - started:.0f} s, loss {losses[0]:.3f} -> {losses[-1]:.3f}; saved to {out}")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

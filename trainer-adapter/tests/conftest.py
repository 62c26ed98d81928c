from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.server import EdgegymServer  # noqa: E402
from support.tiny_model import build_model, build_tokenizer, tool_call_text, transcript_ids, warm_up  # noqa: E402

# One intra-op thread: with tiny models, several threads on a shared 2-core machine spend their
# time contending (measured here: 20 warm-up steps took 0.5 s on one thread, 8.3 s on two).
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The real edgegym server with the test environments (letter-a, guess-number, calculator)."""
    with EdgegymServer(tmp_path_factory.mktemp("edgegym")) as srv:
        yield srv


@pytest.fixture(scope="session")
def tokenizer():
    return build_tokenizer()


def env_transcripts(server_url: str, tokenizer) -> list[tuple[list[int], list[int]]]:
    """Supervised (ids, mask) examples for the test environments: letters for letter-a, a
    tool call then the sum for calculator, two guesses for guess-number. Prompts come from
    the server's /examples, so the model learns the prompts the environments really send."""
    from edgegym import Client

    rng = random.Random(0)
    examples: list[tuple[list[int], list[int]]] = []
    with Client(server_url) as gym:
        for ex in gym.examples("letter-a", limit=40).examples:
            prompt = [m.model_dump(exclude_none=True) for m in ex.prompt]
            for letter in "ABCD":
                examples.append(transcript_ids(tokenizer, prompt + [{"role": "assistant", "content": letter}]))
        calc = gym.env("calculator")
        tools = [t.model_dump(exclude_none=True) for t in calc.tools]
        for ex in gym.examples("calculator", limit=40).examples:
            prompt = [m.model_dump(exclude_none=True) for m in ex.prompt]
            a, b = ex.info["a"], ex.info["b"]
            msgs = prompt + [
                {"role": "assistant", "content": tool_call_text("add", {"a": a, "b": b})},
                {"role": "tool", "tool_call_id": "call_0_0", "content": str(a + b)},
                {"role": "assistant", "content": f"The sum is {a + b}."},
            ]
            examples.append(transcript_ids(tokenizer, msgs, tools))
        for ex in gym.examples("guess-number", limit=20).examples:
            prompt = [m.model_dump(exclude_none=True) for m in ex.prompt]
            g1, g2 = rng.randint(1, 9), rng.randint(1, 9)
            msgs = prompt + [
                {"role": "assistant", "content": str(g1)},
                {"role": "user", "content": rng.choice(["Higher.", "Lower."])},
                {"role": "assistant", "content": str(g2)},
            ]
            examples.append(transcript_ids(tokenizer, msgs))
    return examples




@pytest.fixture(scope="session")
def warm_model_dir(tmp_path_factory: pytest.TempPathFactory, tokenizer, server):
    """A tiny Llama warmed up on transcripts of the test environments, saved like any
    checkpoint (the trainer loads it by path)."""
    model = build_model(tokenizer)
    warm_up(model, env_transcripts(server.url, tokenizer), steps=250)
    out = tmp_path_factory.mktemp("warm-model")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture()
def warm_model(warm_model_dir):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(warm_model_dir)
    model.eval()
    return model

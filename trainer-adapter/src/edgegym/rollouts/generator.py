"""The generation backend interface: token ids in, token ids and logprobs out.

Two implementations: ``VLLMGenerator`` (HTTP to a vLLM server) and
``TransformersGenerator`` (an in-process Hugging Face model). The collector and the
trainer only see this interface, so a CPU run and a GPU run take the same code path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable


@dataclass(frozen=True)
class SamplingParams:
    """Per-request sampling settings (one assistant turn)."""

    #: Most tokens one turn may generate.
    max_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    #: 0 turns top-k off.
    top_k: int = 0
    #: Per-request seed where the backend supports it (vLLM does; batched in-process generation does not).
    seed: int | None = None
    #: Extra token ids that end a turn, beside the tokenizer's EOS.
    stop_token_ids: tuple[int, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Generation:
    """What the model produced for one prompt."""

    #: Sampled token ids, the stop token included when the turn ended on one.
    completion_ids: list[int]
    #: Log-probability of each sampled token under the sampling distribution (after temperature/top-p/top-k).
    logprobs: list[float]
    #: The decoded text (special tokens dropped).
    text: str
    #: "stop" when the model ended the turn, "length" when max_tokens cut it.
    finish_reason: Literal["stop", "length"]


@runtime_checkable
class Generator(Protocol):
    """A backend that samples a completion for a prompt given as token ids."""

    async def generate(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation: ...

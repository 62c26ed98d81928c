"""edgegym: train language models on edgegym environments over HTTP.

- ``Client`` / ``AsyncClient``: the protocol (envs, reset, step, score, evaluation jobs, …) with safe retries.
- ``edgegym.rollouts``: many episodes at once, with exact token ids, logprobs and an env mask.
- ``edgegym.grpo``: a GRPO trainer (torch + transformers; vLLM for generation on GPUs).
- ``edgegym.trl``: a ``rollout_func`` and reward functions for TRL's GRPOTrainer.
"""

from ._retry import RetryPolicy
from .client import AsyncClient, Client
from .errors import EdgegymError
from . import models

__all__ = ["AsyncClient", "Client", "EdgegymError", "RetryPolicy", "models"]
from ._version import __version__  # noqa: E402

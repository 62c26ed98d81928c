"""GRPO training on edgegym environments (torch + transformers; vLLM for generation on GPUs)."""

from .config import ConfigError, GRPOConfig
from .loss import LossSettings, importance_weights, policy_loss

__all__ = ["ConfigError", "GRPOConfig", "GRPOTrainer", "LossSettings", "importance_weights", "policy_loss"]


def __getattr__(name: str):
    if name == "GRPOTrainer":
        from .trainer import GRPOTrainer

        return GRPOTrainer
    raise AttributeError(name)

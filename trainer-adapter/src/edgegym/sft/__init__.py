"""Supervised fine-tuning on environment conversations (``edgegym-train sft``)."""

from .config import SFTConfig
from .data import Example, encode_conversation, read_rows
from .trainer import SFTTrainer

__all__ = ["Example", "SFTConfig", "SFTTrainer", "encode_conversation", "read_rows"]

"""Rollout collection with exact token provenance."""

from .chat_tokens import ChatTokens, TemplateError
from .collector import CollectorSettings, RolloutCollector
from .generator import Generation, Generator, SamplingParams
from .tool_calls import HermesToolCallParser, NoToolCallParser, ToolCallParser
from .types import Rollout, RolloutGroup, TaskRef, assign_advantages
from .vllm_generator import VLLMGenerator

__all__ = [
    "ChatTokens",
    "TemplateError",
    "CollectorSettings",
    "RolloutCollector",
    "Generation",
    "Generator",
    "SamplingParams",
    "HermesToolCallParser",
    "NoToolCallParser",
    "ToolCallParser",
    "Rollout",
    "RolloutGroup",
    "TaskRef",
    "assign_advantages",
    "VLLMGenerator",
    "TransformersGenerator",
]


def __getattr__(name: str):  # torch is only imported when the in-process backend is asked for
    if name == "TransformersGenerator":
        from .transformers_generator import TransformersGenerator

        return TransformersGenerator
    raise AttributeError(name)

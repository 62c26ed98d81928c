"""Rollout collection with exact token provenance."""

from .chat_tokens import ChatTokens, TemplateError
from .collector import CollectorSettings, RolloutCollector, TemplateChanged
from .seated import seat_turns
from .generator import Generation, Generator, SamplingParams
from .harness import (
    HarnessCollector,
    assign_harness_advantages,
    harness_group,
    harness_rollouts,
    harness_trajectories,
    read_harness_episode,
    start_harness_episode,
    wait_done,
)
from .tool_calls import HermesToolCallParser, NoToolCallParser, ToolCallParser
from .trajectory import StoredEpisode, StoredTurn, Trajectory, TrajectoryUnavailable, read_episode, rebuild, template_hash
from .types import Rollout, RolloutGroup, TaskRef, assign_advantages
from .vllm_generator import VLLMGenerator

__all__ = [
    "ChatTokens",
    "TemplateError",
    "CollectorSettings",
    "RolloutCollector",
    "TemplateChanged",
    "seat_turns",
    "StoredEpisode",
    "StoredTurn",
    "Trajectory",
    "TrajectoryUnavailable",
    "read_episode",
    "rebuild",
    "template_hash",
    "HarnessCollector",
    "assign_harness_advantages",
    "harness_group",
    "harness_rollouts",
    "harness_trajectories",
    "read_harness_episode",
    "start_harness_episode",
    "wait_done",
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

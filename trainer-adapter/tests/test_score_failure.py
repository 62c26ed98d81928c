"""A score that could not be given is a failed rollout, never a 0 the model earned."""

from __future__ import annotations

import re
from pathlib import Path

from edgegym import models

_EPISODES_TS = Path(__file__).resolve().parents[2] / "src" / "protocol" / "episodes.ts"


def _score(error: str | None, weight: float = 1.0) -> models.Score:
    component = {"name": "tests", "weight": weight, "score": 0.0, **({"error": error} if error else {})}
    return models.Score.model_validate({"reward": 0.0, "components": [component], "metrics": {}})


def test_a_typed_score_failure_is_found_on_a_weighted_component() -> None:
    assert _score("verifier_timeout: the tests ran past 3 s").failure == "verifier_timeout: the tests ran past 3 s"
    assert _score("reward_file_missing: no reward").failure is not None
    assert _score("sandbox_lost: gone").failure is not None
    assert _score("score_timeout: scoring ran past its 5 s budget").failure is not None


def test_a_judge_failure_a_metric_and_a_clean_score_are_not_failures() -> None:
    assert _score("judge_timeout: judge default (ref j1)").failure is None
    assert _score("verifier_timeout: slow", weight=0.0).failure is None
    assert _score(None).failure is None


def test_the_codes_are_the_servers() -> None:
    # src/protocol/episodes.ts SCORE_FAILURE_CODES; the server's error codes for sandboxes are in ErrorCode too.
    assert models.SCORE_FAILURE_CODES == {"verifier_timeout", "reward_file_missing", "reward_file_empty", "reward_file_invalid", "sandbox_lost", "score_timeout"}
    listed = re.search(r"SCORE_FAILURE_CODES = \[([^\]]*)\]", _EPISODES_TS.read_text())
    assert listed is not None
    assert models.SCORE_FAILURE_CODES == set(re.findall(r'"([a-z_]+)"', listed.group(1)))
    assert "sandbox_lost" in models.ErrorCode.__args__

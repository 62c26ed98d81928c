"""Confidence intervals for rates measured over a fixed set of games."""

from __future__ import annotations

import math


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (95 % by default): sound at 0 and 1 and for small n,
    where the normal approximation gives intervals outside [0, 1] or of width 0."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))

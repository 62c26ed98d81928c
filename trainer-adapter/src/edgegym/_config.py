"""What the trainers' settings share: TOML loading, unknown-key hints, ``--set KEY=VALUE``
overrides and the list of problems ``validate()`` reports.

``GRPOConfig`` and ``SFTConfig`` are dataclasses that inherit ``TomlConfig``; each keeps
its own fields and checks, and one piece of code loads and reports for both, so the two
``edgegym-train`` commands read files and say what is wrong the same way.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import tomllib
from dataclasses import MISSING, asdict, fields
from pathlib import Path
from typing import Any, Self, TypeVar


class ConfigError(ValueError):
    """One or more settings are wrong; the message says how to fix each."""


class Problems:
    """Collects every failed check so one error lists them all (fixing one at a time is slow)."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def need(self, cond: bool, message: str) -> None:
        if not cond:
            self.messages.append(message)

    def raise_any(self) -> None:
        if self.messages:
            raise ConfigError("invalid config:\n  - " + "\n  - ".join(self.messages))


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` items as a dict: a value is JSON when it parses, else a plain string."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: write KEY=VALUE, e.g. --set learning_rate=1e-5")
        raw = value.strip()
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


class TomlConfig:
    """Loading shared by the settings dataclasses; subclasses define fields and ``validate``."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = [k for k in data if k not in known]
        if unknown:
            hints = []
            for k in unknown:
                close = difflib.get_close_matches(k, known, n=1)
                hints.append(f"unknown setting {k!r}" + (f": did you mean {close[0]!r}?" if close else ""))
            raise ConfigError("; ".join(hints))
        return cls(**data)

    @classmethod
    def from_toml(cls, path: str | Path, overrides: dict[str, Any] | None = None) -> Self:
        """Top-level TOML keys are field names; ``overrides`` (from ``--set``) win; then validated."""
        with open(path, "rb") as f:
            data = tomllib.load(f)
        data.update(overrides or {})
        return cls.from_dict(data).validate()

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            if f.default is not MISSING:
                out[f.name] = f.default
            elif f.default_factory is not MISSING:
                out[f.name] = f.default_factory()
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    def validate(self) -> Self:
        raise NotImplementedError


C = TypeVar("C", bound=TomlConfig)


def add_config_arguments(parser: argparse.ArgumentParser, class_name: str, *, required: bool) -> None:
    parser.add_argument("--config", required=required, help=f"TOML file whose top-level keys are {class_name} fields")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a setting (JSON value or plain string)")


def load_config(cls: type[C], prog: str, path: str, overrides: list[str]) -> C | None:
    """The config from ``--config`` and ``--set``, or None after printing why (the CLI exits 2)."""
    try:
        return cls.from_toml(path, parse_overrides(overrides))
    except (ConfigError, OSError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None

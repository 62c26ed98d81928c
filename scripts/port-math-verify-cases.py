"""Ports math-verify's own test cases into edgegym's corpus (src/envs/math/math-verify-cases.json).

math-verify (https://github.com/huggingface/Math-Verify, Apache-2.0) keeps its regression
cases as pytest parametrizations: (gold, prediction, expected) pairs run through
`parse` + `verify` with per-test extraction targets, float rounding and strictness.
This script runs that suite from the PyPI sdist of the pinned version, records every
gold/prediction pair that reaches `verify` together with the options used, the verdict
the test expects, math-verify's own verdict, and the file:line the case is written at.

Usage (in a venv with math-verify==0.9.0 and pytest):
    pip download --no-deps --no-binary :all: math-verify==0.9.0 -d /tmp/mv && tar xzf ...
    python scripts/port-math-verify-cases.py /tmp/mv/math_verify-0.9.0 src/envs/math/math-verify-cases.json
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from pathlib import Path

import pytest


def parametrize_rows(path: Path) -> dict[str, list[int]]:
    """Line of each parametrized row, by test function name."""
    tree = ast.parse(path.read_text())
    rows: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and getattr(dec.func, "attr", "") == "parametrize":
                values = dec.args[1]
                if isinstance(values, ast.List):
                    rows[node.name] = [elt.lineno for elt in values.elts]
    return rows


class Recorder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.cases: list[dict] = []
        self.current: dict | None = None
        self.lines: dict[str, dict[str, list[int]]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):  # noqa: ANN001
        import math_verify
        import tests.test_all as test_all

        rel = Path(item.fspath).relative_to(self.root).as_posix()
        if rel not in self.lines:
            self.lines[rel] = parametrize_rows(Path(item.fspath))
        callspec = getattr(item, "callspec", None)
        params = dict(callspec.params) if callspec else {}
        index = next(iter(callspec.indices.values())) if callspec else None
        row_lines = self.lines[rel].get(item.originalname or item.name, [])
        calls: list[dict] = []
        real_parse, real_verify = math_verify.parse, math_verify.verify

        def parse(text, targets=None, **kw):  # noqa: ANN001, ANN202
            result = real_parse(text, targets, **kw) if targets is not None else real_parse(text, **kw)
            kinds = None
            if targets is not None:
                kinds = [type(t).__name__.replace("ExtractionConfig", "").lower() for t in targets]
            calls.append({"text": text, "targets": kinds, "parsed": [str(p) for p in result]})
            return result

        def verify(gold, pred, **kw):  # noqa: ANN001, ANN202
            result = real_verify(gold, pred, **kw)
            frame = inspect.currentframe()
            line = None
            while frame is not None:
                if frame.f_code.co_name == (item.originalname or item.name):
                    line = frame.f_lineno
                    break
                frame = frame.f_back
            calls.append({"verify": kw, "result": bool(result), "line": line})
            return result

        patched = [m for m in (item.module, test_all) if hasattr(m, "verify") and hasattr(m, "parse")]
        saved = [(m, m.parse, m.verify) for m in patched]
        for m in patched:
            m.parse, m.verify = parse, verify
        try:
            yield
        finally:
            for m, p, v in saved:
                m.parse, m.verify = p, v
        parses = [c for c in calls if "text" in c]
        verifies = [c for c in calls if "verify" in c]
        if len(verifies) != 1 or len(parses) != 2:
            return  # not a gold/prediction pair test (configs, timeouts, string extraction)
        gold, pred = parses
        kw = verifies[0]["verify"]
        expected = params.get("expected", params.get("result"))
        if expected is None:
            expected = verifies[0]["result"]  # a plain assert in the test: it passed, so this is the expectation
        line = row_lines[index] if index is not None and index < len(row_lines) else verifies[0]["line"]
        self.cases.append(
            {
                "source": f"tests/{Path(rel).name}:{line}",
                "gold": gold["text"],
                "pred": pred["text"],
                "expected": bool(expected),
                "mathVerify": verifies[0]["result"],
                "targets": gold["targets"] or ["latex", "expr"],
                "precision": kw.get("float_rounding", 6),
                "strict": kw.get("strict", True),
                "allowSetRelationComp": kw.get("allow_set_relation_comp", False),
            }
        )


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    out = Path(sys.argv[2])
    sys.path.insert(0, str(root))
    recorder = Recorder(root)
    code = pytest.main(["-q", "-p", "no:cacheprovider", str(root / "tests")], plugins=[recorder])
    import math_verify

    version = getattr(math_verify, "__version__", None)
    doc = {
        "NOTICE": (
            "Cases ported from math-verify's test suite (https://github.com/huggingface/Math-Verify, "
            "Copyright The HuggingFace Team, Apache License 2.0), version 0.9.0 as published on PyPI. "
            "Each case names the file and line of the sdist's tests/ it is written at. "
            "Generated by scripts/port-math-verify-cases.py; edgegym's own verdict overrides live in "
            "math-verify-cases.test.ts with the argument for each."
        ),
        "mathVerifyVersion": version or "0.9.0",
        "cases": recorder.cases,
    }
    # One case a line: the corpus reads and diffs as a table.
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"}, indent=1, ensure_ascii=False)[:-2]
    rows = ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in doc["cases"])
    out.write_text(f'{head},\n "cases": [\n{rows}\n ]\n}}\n')
    print(f"{len(recorder.cases)} cases -> {out} (pytest exit {int(code)})")
    if code != 0:
        sys.exit(1)


if __name__ == "__main__":
    main()

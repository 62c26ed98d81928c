"""math-verify's side of `npm run bench:math`: verdicts and time per verify on the corpus.

Reads case files (JSON with a "cases" list as in src/envs/math/math-verify-cases.json),
runs math-verify's `parse` on gold and prediction and `verify` on the two, with each
case's extraction targets, float rounding, strictness and set/relation flag, the way
math-verify's own tests call it (LaTeX boxed_match_priority=0). Prints one JSON object:
{"version", "verdicts": [bool], "seconds": [float], "cpuSeconds": [float]} (wall and CPU
seconds per case, parse + verify; CPU time is less disturbed by other work on a busy machine).
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify


def targets(names: list[str]):
    out = []
    for name in names:
        out.append(LatexExtractionConfig(boxed_match_priority=0) if name == "latex" else ExprExtractionConfig())
    return out


def main() -> None:
    cases = []
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            cases.extend(json.load(f)["cases"])
    verdicts: list[bool] = []
    seconds: list[float] = []
    cpu_seconds: list[float] = []
    for case in cases:
        config = targets(case["targets"])
        start = time.perf_counter()
        cpu_start = time.process_time()
        gold = parse(case["gold"], config)
        pred = parse(case["pred"], config)
        equal = verify(
            gold,
            pred,
            float_rounding=case["precision"],
            strict=case["strict"],
            allow_set_relation_comp=case["allowSetRelationComp"],
        )
        cpu_seconds.append(time.process_time() - cpu_start)
        seconds.append(time.perf_counter() - start)
        verdicts.append(bool(equal))
    json.dump({"version": version("math-verify"), "verdicts": verdicts, "seconds": seconds, "cpuSeconds": cpu_seconds}, sys.stdout)


if __name__ == "__main__":
    main()

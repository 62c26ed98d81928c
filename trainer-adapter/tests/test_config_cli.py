"""Config loading and validation, and the edgegym-train CLI end to end."""

from __future__ import annotations

import json

import pytest

from edgegym.grpo import ConfigError, GRPOConfig
from edgegym.grpo.cli import main
from edgegym.grpo.config import field_docs


def test_every_field_is_documented():
    from dataclasses import fields

    docs = field_docs()
    undocumented = [f.name for f in fields(GRPOConfig) if f.name not in docs]
    assert not undocumented, undocumented


def test_field_docs_module_is_generated_from_config_comments():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("gen_field_docs", root / "scripts" / "gen_field_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    expected = gen.render(gen.parse_field_docs((root / "src" / "edgegym" / "grpo" / "config.py").read_text(encoding="utf-8")))
    stale = "stale: run `python trainer-adapter/scripts/gen_field_docs.py`"
    assert (root / "src" / "edgegym" / "grpo" / "_field_docs.py").read_text(encoding="utf-8") == expected, stale


def test_field_docs_work_without_the_source_files(tmp_path):
    """A copy of the package compiled to .pyc with every .py removed (as a sourceless
    install ships it): --help-config's docs still load."""
    import compileall
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import edgegym

    package = tmp_path / "edgegym"
    shutil.copytree(Path(edgegym.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    assert compileall.compile_dir(str(package), legacy=True, quiet=1)
    for source in package.rglob("*.py"):
        source.unlink()
    code = "import json, edgegym.grpo.config as c; assert not c.__file__.endswith('.py'); print(json.dumps(c.field_docs()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)}, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == field_docs()
    assert "learning_rate" in field_docs()


def test_validation_says_how_to_fix(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('model = "m"\nenv_id = "e"\nnum_generations = 1\ntemperature = 0\ndelta = 1.1\nlearning_rat = 1e-5\n')
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        GRPOConfig.from_toml(bad)
    bad.write_text('model = "m"\nenv_id = "e"\nnum_generations = 1\ntemperature = 0\ndelta = 1.1\ntasks_per_step = 3\ngradient_accumulation_steps = 2\n')
    with pytest.raises(ConfigError) as err:
        GRPOConfig.from_toml(bad)
    text = str(err.value)
    assert "num_generations = 1" in text and "use 2 or more" in text
    assert "temperature = 0" in text
    assert "delta = 1.1 must be greater than 1 + epsilon_high" in text
    assert "pick gradient_accumulation_steps dividing it" in text
    good = tmp_path / "good.toml"
    good.write_text('model = "m"\nenv_id = "e"\nloss_type = "dr_grpo"\nbeta = 0.01\n[env_args]\nlevel = 2\n')
    config = GRPOConfig.from_toml(good)
    assert config.loss_type == "dr_grpo" and config.env_args == {"level": 2}


def test_cli_trains_and_logs(server, warm_model_dir, tmp_path, capsys):
    out = tmp_path / "cli-run"
    cfg = tmp_path / "train.toml"
    cfg.write_text(
        "\n".join(
            [
                f'model = "{warm_model_dir}"',
                f'server_url = "{server.url}"',
                'env_id = "letter-a"',
                "num_generations = 4",
                "tasks_per_step = 2",
                "max_steps = 2",
                "max_tokens = 3",
                "max_seq_len = 96",
                "learning_rate = 1e-3",
                "warmup_steps = 0",
                "num_batches_ahead = 0",
                f'output_dir = "{out}"',
                'progress = "plain"',
            ]
        )
    )
    assert main(["--config", str(cfg), "--set", "loss_type=grpo"]) == 0
    printed = capsys.readouterr().out
    assert "reward" in printed and "clip" in printed and "tok/s" in printed and "done: 2 steps" in printed
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and all(r["policy_lag"] == 0 for r in rows)
    assert (out / "checkpoint-2" / "trainer_state.pt").exists()
    assert main(["--config", str(cfg), "--set", "num_generations=1"]) == 2

"""Reads and writes run directories with verifiers' own code, for test/verifiers-formats.test.ts.

Run with the python of trainer-adapter/.venv-vf03 (verifiers 0.3.1) or .venv-vf04 (verifiers 0.4.0),
both made by scripts/verifiers-venv.sh. Prints one JSON object on stdout.

  load03 DIR ENV MODEL N R   verifiers 0.3's vf-eval loader and resume check on DIR
  write03 DIR ENV MODEL      a vf-eval 0.3 run written by verifiers' own writers
  load04 DIR R [TASKS]       verifiers 0.4's trace reader and resume planner on DIR
                             (the planner's tasks: TASKS, a JSON list of task data, else the run's own rows)
  write04 DIR ENV MODEL [ROWS]  a verifiers 0.4 run (traces.jsonl) written by its own writer; prints its tasks' data
                             (ROWS: a JSON list of two {system, user} prompts, the environment's rows 0 and 1)
"""

import contextlib
import io
import json
import sys
import time
from pathlib import Path


def _kind(value: object) -> str:
    """A JSON value's kind, an integer and a float both being numbers (JSON writes 1.0 as 1)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def load03(run_dir: str, env_id: str, model: str, num_examples: int, rollouts: int) -> dict:
    from verifiers.legacy.utils.eval_utils import filter_inputs, print_timing
    from verifiers.legacy.utils.save_utils import (
        GenerateOutputsBuilder,
        load_outputs,
        validate_resume_metadata,
    )

    path = Path(run_dir)
    # What `vf-eval --resume` does first: the saved metadata must match the settings.
    validate_resume_metadata(path, env_id, model, num_examples, rollouts)
    outputs = load_outputs(path)
    builder = GenerateOutputsBuilder(
        env_id=env_id,
        env_args={},
        model=model,
        client=object(),
        num_examples=num_examples,
        rollouts_per_example=rollouts,
        state_columns=None,
        sampling_args={},
        results_path=path,
    )
    builder.add_outputs(outputs)
    results = builder.build()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_timing(results)
    meta = results["metadata"]
    # What 0.3.1's save_metadata would write for this run: build_metadata less the two keys it pops.
    own = dict(builder.build_metadata())
    own.pop("path_to_save")
    own.pop("date")
    saved = json.loads((path / "metadata.json").read_text())
    # vf-eval --resume: which of the planned rollouts (N rows × R) it would still run.
    planned = [{"example_id": i} for i in range(num_examples) for _ in range(rollouts)]
    remaining = filter_inputs(planned, outputs, rollouts)
    return {
        "resume_remaining": len(remaining),
        "avg_error": meta["avg_error"],
        "count": len(outputs),
        "example_ids": [o["example_id"] for o in outputs],
        "rewards": [o["reward"] for o in outputs],
        "avg_reward": meta["avg_reward"],
        "avg_metrics": meta["avg_metrics"],
        "pass_at_k": meta["pass_at_k"],
        "timing_printed": printed.getvalue(),
        "completion_roles": [[m["role"] for m in o["completion"]] for o in outputs],
        "metadata_missing": sorted(k for k in own if k not in saved),
        "metadata_wrong_type": sorted(
            k for k in own if k in saved and own[k] is not None and saved[k] is not None and _kind(json.loads(json.dumps(own[k], default=str))) != _kind(saved[k])
        ),
        "metadata_time": saved.get("time"),
    }


def write03(run_dir: str, env_id: str, model: str) -> dict:
    """Two rows × 2 rollouts wanted; writes 3 (row 1 is missing one), one of them failed,
    through state_to_output / save_outputs / save_metadata as vf-eval 0.3 does."""
    from verifiers.legacy.types import RolloutTiming, TimeSpan, TimeSpans
    from verifiers.legacy.utils.save_utils import (
        GenerateOutputsBuilder,
        save_metadata,
        save_outputs,
        state_to_output,
    )

    path = Path(run_dir)
    now = time.time()

    def state(example_id: int, text: str, reward: float, error: dict | None) -> dict:
        timing = RolloutTiming(
            start_time=now,
            setup=TimeSpan(start=now, end=now + 0.01),
            generation=TimeSpan(start=now, end=now + 0.5),
            scoring=TimeSpan(start=now + 0.5, end=now + 0.6),
            model=TimeSpans(spans=[TimeSpan(start=now + 0.01, end=now + 0.41)]),
            env=TimeSpans(spans=[]),
        )
        s = {
            "example_id": example_id,
            "prompt": [{"role": "user", "content": text}],
            "completion": [{"role": "assistant", "content": f"<answer>{text[::-1]}</answer>"}],
            "answer": text[::-1],
            "info": {},
            "reward": reward,
            "timing": timing,
            "is_completed": error is None,
            "is_truncated": False,
            "stop_condition": None if error else "single_turn",
            "metrics": {"lcs_ratio": reward},
            "token_usage": {"input_tokens": 12.0, "output_tokens": 7.0},
        }
        if error is not None:
            s["error"] = error
        return s

    failed = {
        "error": "ModelError",
        "message": "boom",
        "error_chain_repr": "ModelError('boom')",
        "error_chain_str": "ModelError: boom",
    }
    states = [state(0, "abc", 1.0, None), state(0, "abc", 0.5, None), state(1, "hello", 0.0, failed)]
    outputs = [state_to_output(s) for s in states]
    builder = GenerateOutputsBuilder(
        env_id=env_id,
        env_args={},
        model=model,
        client=object(),
        num_examples=2,
        rollouts_per_example=2,
        state_columns=None,
        sampling_args={},
        results_path=path,
    )
    builder.add_outputs(outputs)
    save_outputs(outputs, path)
    save_metadata(builder.build_metadata(), path)
    return {"written": len(outputs)}


def _trace_type():
    from verifiers.v1.configs.agent import WireAgentConfig
    from verifiers.v1.state import State
    from verifiers.v1.task import WireTaskData
    from verifiers.v1.trace import Trace

    return Trace[WireTaskData, State, WireAgentConfig]


def load04(run_dir: str, num_rollouts: int, tasks_file: str | None = None) -> dict:
    from verifiers.v1.cli.eval import resume
    from verifiers.v1.utils.trace_store import read_episodes

    path = Path(run_dir)
    episodes = read_episodes(path, _trace_type())
    out = []
    for ep in episodes:
        trace = ep.traces[0]
        branch = trace.branches[-1]
        out.append(
            {
                "idx": ep.task.data.idx,
                "ok": ep.ok,
                "reward": trace.reward,
                "roles": [m.role for m in branch.messages],
                "sampled": [n.sampled for n in branch.nodes],
                "tool_calls": [
                    [c.name for c in (m.tool_calls or [])] for m in branch.messages if m.role == "assistant"
                ],
                "tools": [t.name for t in trace.tools],
                "model_seconds": trace.timing.agent.model.duration,
                "scoring_seconds": trace.timing.scoring.duration,
                "finish": [c.finish_reason for c in trace.calls],
                "stop_condition": trace.stop_condition,
            }
        )
    # verifiers' own resume planner (`vf-eval --resume`), on a copy: it keeps the lines its model
    # validates and whose episode is ok, matched to the run's tasks by content hash, and says
    # how many rollouts each task still needs. The tasks are the taskset's rows when given (what
    # vf-eval passes it: `list(taskset)`), else the run's own rows, as Task objects.
    import shutil
    import tempfile

    from verifiers.v1.task import Task, WireTaskData

    if tasks_file is not None:
        tasks = [Task(WireTaskData.model_validate(d)) for d in json.loads(Path(tasks_file).read_text())]
    else:
        by_idx = {}
        for ep in episodes:
            by_idx.setdefault(ep.task.data.idx, ep.task.data)
        tasks = [Task(by_idx[i]) for i in sorted(by_idx)]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "run"
        shutil.copytree(path, copy)
        plan = resume.load(copy, tasks, num_rollouts)
    kept = sum(len(k) for _, k, _ in plan)
    missing = {str(task.data.idx): left for task, _, left in plan}
    return {"episodes": out, "resume_keeps": kept, "resume_missing": missing}


def write04(run_dir: str, env_id: str, model: str, rows: list[dict] | None = None) -> dict:
    """Row 0 twice (rewards 1 and 0.25), row 1 once and failed, via verifiers' write_episode.

    The tasks are a taskset's own: a TaskData subclass with a field of its own (`text`), and
    each episode records the task as `Env.run` does (`TraceTask(type, data, key, hash)`), so
    their content hash is not that of edgegym's task data for the same row."""
    from verifiers.v1.configs.agent import WireAgentConfig
    from verifiers.v1.episode import EnvInfo, Episode, EvalRunInfo
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.state import State
    from verifiers.v1.task import Task, TaskData
    from verifiers.v1.trace import AgentInfo, Error, ModelCall, Reward, TimeSpan, Trace, TraceTask
    from verifiers.v1.types import AssistantMessage, SystemMessage, Usage, UserMessage
    from verifiers.v1.utils.trace_store import write_episode

    path = Path(run_dir)
    path.mkdir(parents=True, exist_ok=True)
    (path / "traces.jsonl").write_text("")
    now = time.time()

    class ReverseData(TaskData):
        text: str

    trace_type = Trace[ReverseData, State, WireAgentConfig]

    class ReverseTask(Task):
        pass

    rows = rows or [{"system": "Reverse the text.", "user": "abc"}, {"system": "Reverse the text.", "user": "hello"}]
    tasks = [
        ReverseTask(ReverseData(idx=i, text=r["user"], prompt=[UserMessage(content=r["user"])], system_prompt=r["system"]))
        for i, r in enumerate(rows)
    ]

    def episode(idx: int, score: float, ok: bool) -> Episode:
        row = tasks[idx]
        text = row.data.text
        task = TraceTask(type=type(row).__name__, data=row.data, key=row.key, hash=row.hash)
        nodes = [
            MessageNode(message=SystemMessage(content=row.data.system_prompt)),
            MessageNode(parent=0, message=UserMessage(content=text)),
        ]
        calls = []
        if ok:
            nodes.append(MessageNode(parent=1, message=AssistantMessage(content=f"<answer>{text[::-1]}</answer>"), sampled=True))
            calls.append(ModelCall(node=2, model=model, finish_reason="stop", usage=Usage(prompt_tokens=20, completion_tokens=9), time=TimeSpan(start=now, end=now + 0.3)))
        trace = trace_type(
            task=task,
            agent=AgentInfo(config=WireAgentConfig(model=model)),
            nodes=nodes,
            calls=calls,
            rewards={"lcs_ratio": Reward(score=score, weight=1.0)} if ok else {"lcs_ratio": None},
            metrics={"turns": 1.0},
            is_completed=ok,
            ok=ok,
            stop_condition="single_turn" if ok else None,
            errors=[] if ok else [Error(type="ModelError", message="boom")],
        )
        return Episode(env=EnvInfo(id=env_id), task=task, run=EvalRunInfo(id="vfrun"), ok=ok, traces=[trace], errors=[] if ok else [Error(type="ModelError", message="boom")])

    for ep in [episode(0, 1.0, True), episode(0, 0.25, True), episode(1, 0.0, False)]:
        write_episode(path, ep)
    return {"written": 3, "tasks": [t.data.model_dump(mode="json", exclude_none=True) for t in tasks]}


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "load03":
        result = load03(args[0], args[1], args[2], int(args[3]), int(args[4]))
    elif cmd == "write03":
        result = write03(args[0], args[1], args[2])
    elif cmd == "load04":
        result = load04(args[0], int(args[1]), args[2] if len(args) > 2 else None)
    elif cmd == "write04":
        result = write04(args[0], args[1], args[2], json.loads(args[3]) if len(args) > 3 else None)
    else:
        raise SystemExit(f"unknown command {cmd}")
    print(json.dumps(result))

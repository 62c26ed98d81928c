"""Which edgegym task each training prompt stands for.

TRL hands a ``rollout_func`` the batch's prompts and nothing else, so the rollout function
needs a prompt -> task map. It is an object owned by one rollout function (built from its
trainer's datasets, or given to it), never module state: two trainers in one process, on
different environments or splits, must not see each other's tasks.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from ..rollouts.types import TaskRef

#: The dataset columns ``edgegym_dataset`` writes and ``PromptTasks.from_dataset`` reads.
TASK_COLUMNS = ("prompt", "edgegym_index", "edgegym_split")


def prompt_key(prompt: Any) -> str:
    """A prompt's canonical JSON: equal prompts, equal keys, whatever their dict order."""
    return json.dumps(prompt, sort_keys=True, ensure_ascii=False)


class PromptTasks:
    """Prompt (canonical JSON) -> the task (split and row index) it was drawn from."""

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRef] = {}

    def add(self, prompt: Any, index: int, split: str) -> None:
        """Records that ``prompt`` is row ``index`` of ``split``. When two rows have the same
        prompt the first is kept: either plays the same task text."""
        self._tasks.setdefault(prompt_key(prompt), TaskRef(index=int(index), seed=None, split=str(split)))

    def get(self, prompt: Any) -> TaskRef | None:
        return self._tasks.get(prompt_key(prompt))

    def __contains__(self, prompt: Any) -> bool:
        return prompt_key(prompt) in self._tasks

    def __len__(self) -> int:
        return len(self._tasks)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> "PromptTasks":
        """From rows carrying ``prompt``, ``edgegym_index`` and ``edgegym_split``."""
        tasks = cls()
        for row in rows:
            tasks.add(row["prompt"], row["edgegym_index"], row["edgegym_split"])
        return tasks

    @classmethod
    def from_dataset(cls, dataset: Any) -> "PromptTasks":
        """From a ``datasets.Dataset`` made by ``edgegym_dataset`` (or with its columns), or a
        dict of them (TRL's ``eval_dataset`` may be one)."""
        tasks = cls()
        tasks.extend(dataset)
        return tasks

    def extend(self, dataset: Any) -> None:
        """Adds the rows of a dataset (or of each dataset in a dict of them)."""
        if dataset is None:
            return
        if isinstance(dataset, Mapping):
            for part in dataset.values():
                self.extend(part)
            return
        columns = getattr(dataset, "column_names", None)
        if not isinstance(columns, list) or any(c not in columns for c in TASK_COLUMNS):
            raise TypeError(
                f"a dataset without the columns {', '.join(TASK_COLUMNS)}: build it with edgegym_dataset(), "
                "or pass EdgegymRolloutFunc(tasks=PromptTasks.from_rows(...))"
            )
        for prompt, index, split in zip(*(dataset[c] for c in TASK_COLUMNS)):
            self.add(prompt, index, split)

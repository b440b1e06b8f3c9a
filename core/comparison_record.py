"""Where the project keeps its comparisons, and what a deleted part does to them, without Qt.

A comparison (core.comparison_run) is recorded in the project's view state, saved with the session:
`view["comparisons"][id]` holds its network, budgets, each target's name and kind, and `runs`, each
target's part run id (None: no engine costs its kind, or the part never started). A part run the
user deletes is no part of any comparison any more: every record naming it names None there and
lists the target's index in `deleted`, so the comparison shows that row as "run deleted" (Compare
costs it again) and a saved session names no run it does not hold. A record left with no part run
at all is dropped. `forget_run` returns the records as they were, for the delete's undo
(`restore`). The project calls these from its own `delete_run` (core.project), so undo, redo and
a macro of several deletes all go through one place.
"""

from __future__ import annotations

import copy
from typing import Any

BOOK = "comparisons"        # the key of the records in the project's view state


def book_of(view: dict[str, Any]) -> dict[str, Any]:
    """The records (an empty dict, not stored, where there are none)."""
    book = view.get(BOOK)
    return book if isinstance(book, dict) else {}


def deleted_parts(entry: dict[str, Any]) -> set[int]:
    """The target indices whose part run was deleted."""
    marks = entry.get("deleted")
    return {i for i in marks if isinstance(i, int)} if isinstance(marks, list) else set()


def forget_run(view: dict[str, Any], run_id: str) -> dict[str, Any]:
    """Mark `run_id` deleted in every record naming it (dropping a record left with no part run);
    the touched records as they were (for `restore`)."""
    book = book_of(view)
    before: dict[str, Any] = {}
    for cid, entry in list(book.items()):
        runs = entry.get("runs") if isinstance(entry, dict) else None
        if not isinstance(runs, list) or run_id not in runs:
            continue
        before[cid] = copy.deepcopy(entry)
        gone = {i for i, r in enumerate(runs) if r == run_id}
        entry["runs"] = [None if i in gone else r for i, r in enumerate(runs)]
        entry["deleted"] = sorted(deleted_parts(entry) | gone)
        if not any(isinstance(r, str) for r in entry["runs"]):
            del book[cid]
    return before


def forget_missing(view: dict[str, Any], held: set[str]) -> None:
    """Mark deleted every part run no longer held (a session written before deletes were marked,
    or edited by hand): what the file holds is what its comparisons name."""
    for entry in list(book_of(view).values()):
        runs = entry.get("runs") if isinstance(entry, dict) else None
        for rid in {r for r in runs if isinstance(r, str) and r not in held} if isinstance(runs, list) else ():
            forget_run(view, rid)


def restore(view: dict[str, Any], before: dict[str, Any]) -> None:
    """Put records back as `forget_run` found them (the delete's undo)."""
    if not before:
        return
    book = view.get(BOOK)
    if not isinstance(book, dict):
        book = view[BOOK] = {}
    for cid, entry in before.items():
        book[cid] = copy.deepcopy(entry)

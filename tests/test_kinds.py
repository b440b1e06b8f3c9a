"""Open registries of library item kinds (core.kinds): a kind registered from its own module is read
from sessions, summarised, made new and started with, without touching a shared file."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from core import kinds, session
from core.errors import InputError
from core.library_items import new_workload, workload_variants
from core.project import Project, starter_workloads, summary
from core.workload import WORKLOAD_KINDS, workload_from_json


@dataclass
class Toy:
    """A made-up workload kind: a number of toys."""

    count: int = 3
    kind: str = field(default="toy", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "toy", "count": self.count}

    @staticmethod
    def from_json(d: Any, path: str = "workload") -> "Toy":
        if not isinstance(d.get("count"), int) or d["count"] < 0:
            raise InputError("expected a count >= 0", f"{path}.count")
        return Toy(d["count"])


@pytest.fixture
def toy_kind(monkeypatch):
    registry = copy.copy(kinds._KINDS)
    registry["workloads"] = dict(registry["workloads"])
    monkeypatch.setattr(kinds, "_KINDS", registry)
    kinds.register(kinds.ItemKind("workloads", "toy", "Toys", Toy, Toy.from_json, lambda t: f"{t.count} toys",
                                  lambda v: ("Toys", Toy(int(v or 3))), lambda: {"3": "three", "7": "seven"},
                                  starters=lambda: [(99, "Some toys", Toy(5))], order=99))


def test_a_registered_kind_is_everywhere_a_kind_is_read(toy_kind, tmp_path):
    assert WORKLOAD_KINDS["toy"] == "Toys" and list(WORKLOAD_KINDS)[-1] == "toy"
    assert workload_from_json({"kind": "toy", "count": 2}) == Toy(2)
    with pytest.raises(InputError) as info:
        workload_from_json({"kind": "toy", "count": -1})
    assert info.value.where == "workload.count"
    assert new_workload("toy", "7") == ("Toys", Toy(7)) and workload_variants("toy") == {"3": "three", "7": "seven"}
    assert starter_workloads()[-1] == ("Some toys", Toy(5)) and summary(Toy(4)) == "4 toys"
    p = Project.starter()
    assert any(isinstance(e.value, Toy) for e in p.workloads)
    path = tmp_path / "toys.dfx"
    session.save(p, path)
    assert [e.value for e in session.load(path).workloads if e.kind == "toy"] == [Toy(5)]


def test_an_unknown_kind_lists_the_known_ones():
    with pytest.raises(InputError) as info:
        workload_from_json({"kind": "toys"})
    assert info.value.where == "workload.kind" and "kernels" in info.value.message


def test_a_second_kind_of_the_same_name_is_refused(toy_kind):
    with pytest.raises(ValueError):
        kinds.register(kinds.ItemKind("workloads", "toy", "Other toys", dict, lambda d, p: {}, str,
                                      lambda v: ("x", {})))


def test_every_kind_has_an_editor(qtbot):
    from core.kinds import kinds as all_kinds
    from gui.editors import editor_classes

    assert set(all_kinds("workloads")) <= set(editor_classes("workloads"))
    assert set(all_kinds("targets")) <= set(editor_classes("targets"))  # the schema-built editor where none of its own

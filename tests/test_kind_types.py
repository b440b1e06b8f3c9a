"""The type checkers' Workload and Target are base classes, not lists of kinds: every kind
registered in core.kinds (core/workload.py's and each core/<pkg>/item_kinds.py's) must be one."""

from core.kinds import kinds
from core.workload import Target, Workload


def test_every_registered_kind_is_a_workload_or_a_target():
    for lib, base in (("workloads", Workload), ("targets", Target)):
        for name, kind in kinds(lib).items():
            assert issubclass(kind.cls, base), f"{lib[:-1]} kind {name!r}: {kind.cls.__name__} is not a {base.__name__}"
            _, item = kind.new(None)
            assert isinstance(item, base) and item.kind == name and item.to_json()["kind"] == name

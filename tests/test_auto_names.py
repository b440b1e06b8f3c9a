"""Names an item takes from its values ("Accelerator, 64 KiB") follow them; a user's own stays (issue 49)."""

from __future__ import annotations

import copy

from core import session
from core.kinds import generated_name
from core.project import Project
from core.workload import CnnNetwork, DataflowTarget, FpgaTarget, MobileSocTarget


def _entry(p: Project, name: str):
    return next(e for e in [*p.workloads, *p.targets] if e.name == name)


def test_a_generated_name_follows_its_values_in_one_undo_step():
    p = Project.starter()
    e = _entry(p, "Accelerator, 64 KiB")
    assert e.auto_name
    p.set_value("targets", e.id, DataflowTarget(memory_bytes=256 * 1024))
    assert e.name == "Accelerator, 256 KiB"
    f = _entry(p, "ZC706 at 1 GB/s")
    p.set_value("targets", f.id, FpgaTarget("zcu102", 4.5))
    assert f.name == "ZCU102 at 4.5 GB/s"
    m = _entry(p, "Mobile SoC, 2 cores x 4 lanes")
    p.set_value("targets", m.id, MobileSocTarget(cores=8, vector_width=16))
    assert m.name == "Mobile SoC, 8 cores x 16 lanes"
    c = _entry(p, "VGG-16")
    p.set_value("workloads", c.id, CnnNetwork("resnet18"))
    assert c.name == "ResNet-18"
    p.undo()
    assert c.name == "VGG-16" and c.value == CnnNetwork("vgg16")


def test_a_users_name_stays_and_taking_the_generated_one_back_follows_again():
    p = Project.starter()
    e = _entry(p, "Accelerator, 64 KiB")
    p.rename("targets", e.id, "my chip")
    assert not e.auto_name
    p.set_value("targets", e.id, DataflowTarget(memory_bytes=1024))
    assert e.name == "my chip"
    p.rename("targets", e.id, "Accelerator, 1 KiB")
    assert e.auto_name
    p.set_value("targets", e.id, DataflowTarget(memory_bytes=2048))
    assert e.name == "Accelerator, 2 KiB"


def test_two_items_following_their_values_keep_distinct_names():
    p = Project.starter()
    e = _entry(p, "Accelerator, 64 KiB")
    other = p.add("targets", "Accelerator, 128 KiB", DataflowTarget(memory_bytes=128 * 1024))
    assert p.entry("targets", other).auto_name
    p.set_value("targets", e.id, DataflowTarget(memory_bytes=128 * 1024))
    assert e.name == "Accelerator, 128 KiB (2)" and e.auto_name
    p.set_value("targets", e.id, DataflowTarget(memory_bytes=32 * 1024))
    assert e.name == "Accelerator, 32 KiB"


def test_sessions_keep_the_mark_and_older_ones_read_it_from_the_name():
    p = Project.starter()
    e = _entry(p, "Accelerator, 64 KiB")
    p.rename("targets", e.id, "Accelerator, 64 KiB, mine")
    doc = session.to_json(p)
    q = session.from_json(copy.deepcopy(doc))
    assert not _entry(q, "Accelerator, 64 KiB, mine").auto_name
    assert _entry(q, "ZC706 at 1 GB/s").auto_name
    for lib in ("workloads", "targets"):         # a file saved before the mark existed
        for item in doc["library"][lib]:
            del item["auto_name"]
    old = session.from_json(doc)
    assert _entry(old, "ZC706 at 1 GB/s").auto_name and _entry(old, "VGG-16").auto_name
    assert not _entry(old, "Accelerator, 64 KiB, mine").auto_name and not _entry(old, "My kernels").auto_name


def test_every_starter_with_a_generated_name_starts_with_it():
    p = Project.starter()
    for lib in ("workloads", "targets"):
        for e in p.entries(lib):
            assert e.auto_name == (e.name == generated_name(lib, e.value))      # type: ignore[arg-type]
    assert sum(e.auto_name for e in p.targets) == 3

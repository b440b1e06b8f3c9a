"""The stepper on the AnalogNet2 program of Cain's Table 2, shared by the stepper tests."""

from pathlib import Path

import pytest

from core.engine import get_engine
from core.simulate import replay as replays
from core.workload import Scamp5Target

REPO = Path(__file__).resolve().parents[1]
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")


@pytest.fixture(scope="module")
def replay():
    settings = dict(get_engine("simulate").default_settings(), program_file=TABLE2)
    return replays.build(settings, Scamp5Target(6, 32))


@pytest.fixture
def stepper(qtbot, replay):
    from gui.panels.simulate.stepper import Scamp5Stepper

    st = Scamp5Stepper()
    qtbot.addWidget(st)
    st.resize(1400, 700)
    st.show()
    qtbot.waitExposed(st)
    st.load(replay)
    return st

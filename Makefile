# Two commands do all the set-up: `make run` starts the app, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed

.PHONY: run test screenshot benchmarks clean

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

run: $(STAMP)
	$(PY) main.py

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

screenshot: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) main.py --screenshot assets/screenshot.png

clean:
	rm -rf $(VENV) .pytest_cache

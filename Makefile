# Two commands do all the set-up: `make run` starts the app, `make test` runs the tests.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed

.PHONY: run test test-fast lint screenshot benchmarks clean native

$(STAMP): requirements.txt $(wildcard requirements-*.txt)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

# The Cain engine's compiled search (core/cain/csrc/bagsearch.c),
# built with the system C compiler into build/cain/; a no-op when this version is built already.
native: $(STAMP)
	@$(PY) -m core.cain.csearch --build >/dev/null

# Qt's X11 plugin needs a few system libraries that minimal Debian images lack.
QT_X11_DEBS := libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxkbcommon-x11-0
run: $(STAMP) native
	@missing=$$(ldd $$($(PY) -c "import PySide6, pathlib; print(pathlib.Path(PySide6.__file__).parent / 'Qt/plugins/platforms/libqxcb.so')") 2>/dev/null | grep -c "not found"); \
	if [ "$$missing" != 0 ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing the X11 libraries Qt needs: $(QT_X11_DEBS)"; \
	    (apt-get install -y -qq $(QT_X11_DEBS) || (apt-get update -qq && apt-get install -y -qq $(QT_X11_DEBS))) >/dev/null; \
	  else echo "note: Qt needs these system libraries for X11 windows: $(QT_X11_DEBS)"; fi; fi
	$(PY) main.py $(ARGS)

# One test process per core; a file's tests stay in one process (its module fixtures, e.g. compiled programs, are built once).
# Byte-code caches are written even where PYTHONDONTWRITEBYTECODE is set: without them each test process
# compiles and assertion-rewrites every module again (about 10 s of CPU per process).
TEST_ENV = QT_QPA_PLATFORM=offscreen PYTHONDONTWRITEBYTECODE=
test: $(STAMP) native
	$(TEST_ENV) $(PY) -m pytest -q -n auto --dist loadfile

# The suite without the tests marked slow (pytest.ini): installs, Dask clusters, C compilation, process corpora;
# the property tests draw a quarter of their examples (tests/examples.py).
test-fast: $(STAMP) native
	$(TEST_ENV) DFE_TEST_EXAMPLES=0.25 $(PY) -m pytest -q -n auto --dist loadfile -m "not slow"

# Style (ruff), types of core/, sims/ and gui/ (mypy), import layering (import-linter); settings in pyproject.toml.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

SHOT := QT_QPA_PLATFORM=offscreen $(PY) main.py --open assets/example_session.dfx --size 1600x1000
screenshot: $(STAMP)
	$(SHOT) --show r1 --screenshot assets/screenshot.png
	$(SHOT) --tab cain --compare r3,r4 --screenshot assets/screenshot-compare.png
	$(SHOT) --tab fcnnx --screenshot assets/screenshot-fcnnx.png
	$(SHOT) --show r2:step=8 --screenshot assets/screenshot-stepper.png

# Lists the benchmark scripts with what each measures; run one with $(PY) benchmarks/NAME.py [--json].
benchmarks: $(STAMP)
	@for f in benchmarks/*.py; do printf '%-34s %s\n' "$$f" "$$($(PY) -c "import ast,sys; d=ast.get_docstring(ast.parse(open(sys.argv[1]).read())) or ''; print(d.split(chr(10))[0])" $$f)"; done

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .import_linter_cache

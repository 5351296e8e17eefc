PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play serve test test-core test-slow lint axe bench loadtest soak screenshots clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; install Python 3.11 or run 'make PYTHON=python3 ...'"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

play: $(STAMP)
	$(BIN)/koikoi play

serve: $(STAMP)
	$(BIN)/koikoi serve

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/mypy --strict src/koikoi scripts
	$(BIN)/lint-imports

# The parts of the suite are markers (pyproject.toml): slow, browser (Chromium),
# postgres ($$KOIKOI_TEST_DATABASE_URL), multiprocess (starts processes), wheel,
# and the faces: tui (tests/tui) and web (tests/server). `test` runs every part
# but slow; `test-core` only what no marker names: the game, the kernel, the
# players, the research environments, the lab and the command line.
CORE := not slow and not browser and not postgres and not multiprocess and not wheel and not tui and not web

# axe-core for the accessibility tests (tests/server/test_server_browser_a11y.py):
# the pinned npm tarball, its integrity hash checked, cached in .cache/ (gitignored).
AXE := .cache/axe-core/axe.min.js

$(AXE): scripts/fetch-axe.py | $(STAMP)
	$(BIN)/python scripts/fetch-axe.py

axe: $(AXE)

test: $(STAMP) lint $(AXE)
	$(BIN)/python -m pytest

# The core on two processes (pytest-xdist): about 35 s on the 2-core machine.
test-core: $(STAMP)
	$(BIN)/python -m pytest -n 2 -m "$(CORE)"

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow

# New baselines of the visual tests (tests/server/visual/) and the pictures of
# docs/web.md, after a deliberate change of the web game's looks: look, then commit.
screenshots: $(STAMP)
	KOIKOI_UPDATE_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/server/test_server_browser_visual.py

bench: $(STAMP)
	$(BIN)/koikoi bench engine
	$(BIN)/koikoi bench kernel

# 1 and 2 server processes, 100 to 300 games: a table of p95 against games. Two
# processes need PostgreSQL: --database-url, $$KOIKOI_TEST_DATABASE_URL, else a
# throw-away cluster (scripts/pg-test-cluster.sh; needs the PostgreSQL server).
loadtest: $(STAMP)
	$(BIN)/python scripts/loadtest.py --games 100,200,300 --processes 1,2 --rounds 2

soak: $(STAMP)
	$(BIN)/python scripts/soak.py --games 10000 --every 500

clean:
	rm -rf $(VENV) .cache build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .import_linter_cache

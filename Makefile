# Two commands do everything on a fresh machine with Python 3.11+, git and make:
#   make demo   set up .venv, then run the main job (offline)
#   make test   set up .venv, then run what CI runs
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# the real agent CLIs (package.json, exact versions); tests that drive them skip, saying why, without npm
CLIS := node_modules/.installed
UV_VERSION := 0.13.8
# the VS Code extension (editors/vscode) and the code-server its tests drive (tests/vscode/host)
EXT := editors/vscode
VSIX := $(EXT)/watcher.vsix
CODE_SERVER := tests/vscode/host/node_modules/.installed

.PHONY: demo test clis vsix vscode-host check lint types imports unit notebooks bench lab clean dist

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "watcher needs Python 3.11 or newer; set PYTHON=/path/to/python3.11")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# uv (a pinned wheel from PyPI) installs the pinned set in seconds where pip takes minutes
	$(PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -c constraints.txt -e '.[all,dev]'
	@touch $(STAMP)

# the newest Python on the machine, with what the Python security scan needs: the scan must find
# the same there as on .venv's (tests/roles/taint/test_interpreters.py skips, saying why, without it)
NEWEST_PY := $(shell for p in $(HOME)/.pyenv/versions/3.13*/bin/python3.13 $$(command -v python3.13); do \
	"$$p" -c 'import sys' 2>/dev/null && { echo "$$p"; break; }; done)
NEWEST := .venv-newest/.installed

$(NEWEST): constraints.txt $(STAMP)
	@if [ -n "$(NEWEST_PY)" ]; then \
		$(VENV)/bin/uv venv --quiet --allow-existing --python $(NEWEST_PY) .venv-newest && \
		$(VENV)/bin/uv pip install --quiet --python .venv-newest/bin/python -c constraints.txt ast-grep-py bandit && touch $(NEWEST); \
	else echo "no Python 3.13 found: the scan is not compared across interpreters"; fi

$(CLIS): package.json package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --no-audit --no-fund --loglevel=error && touch $(CLIS); \
	else echo "npm not found: the real agent CLIs are not installed; tests that drive them will skip"; fi

clis: $(CLIS)

$(EXT)/node_modules/.installed: $(EXT)/package.json $(EXT)/package-lock.json
	cd $(EXT) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed

$(VSIX): $(EXT)/node_modules/.installed $(EXT)/tsconfig.json $(EXT)/README.md $(wildcard $(EXT)/src/*.ts)
	cd $(EXT) && npx vsce package --allow-missing-repository --out watcher.vsix

vsix: $(VSIX)

# code-server 4.100.3 offline: Debian's rg stands in for @vscode/ripgrep's download, node-gyp gets
# Debian's Node headers and no prompt (research/vscode-offline.md); skipped, saying why, without npm
$(CODE_SERVER): tests/vscode/host/package.json tests/vscode/host/package-lock.json
	@if command -v npm >/dev/null && command -v rg >/dev/null; then \
		cache=$${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11 && mkdir -p $$cache/rg && cp "$$(command -v rg)" $$cache/rg/ && \
		tar -czf $$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz -C $$cache/rg rg && \
		cd tests/vscode/host && npm_config_yes=true npm_config_nodedir=/usr npm_config_unsafe_perm=true \
			npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm or rg (Debian's ripgrep) not found: code-server is not installed; the VS Code tests will skip"; fi

vscode-host: $(CODE_SERVER)
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory vsix; \
	else echo "npm not found: the extension is not built; the VS Code tests will skip"; fi

demo: DEMO_START := $(shell date +%s)
demo: $(STAMP) $(CLIS)
	@# recorded agent sessions replayed through the offline watchers, then the example notebooks
	@# executed headless on a real kernel
	$(PY) -m watcher.demo
	@# one spawn end to end: the real Claude Code CLI when npm installed it, else the fake CLI (it says which)
	$(PY) -m watcher.demo.spawn
	@# a short fleet: one task stuck (nudged, then paused), one learning relayed, as a timeline
	$(PY) -m watcher.demo.fleet
	$(PY) -m watcher.demo.notebooks
	@echo; echo "make demo: done in $$(( $$(date +%s) - $(DEMO_START) ))s — recorded sessions replayed through the offline watchers,"; \
	echo "  one spawn end to end, a short fleet, and the example notebooks on a real kernel (all offline)."; \
	echo "Next: source .venv/bin/activate, then try"; \
	echo "  watcher replay example_notebooks/data/agent_writes_vulnerable_code.jsonl   # audit a transcript"; \
	echo "  watcher hooks install                                                      # guard your own Claude Code sessions"; \
	echo "  make lab                                                                   # the notebooks in JupyterLab"; \
	echo "  watcher --help                                                             # everything else"

# the notebooks run even when a unit test failed; both outcomes are reported, either fails the run
test: check
	@unit=0; notebooks=0; \
	$(MAKE) --no-print-directory unit || unit=$$?; \
	$(MAKE) --no-print-directory notebooks || notebooks=$$?; \
	echo "make test: unit tests $$( [ $$unit = 0 ] && echo passed || echo FAILED ); notebooks $$( [ $$notebooks = 0 ] && echo passed || echo FAILED )"; \
	[ $$unit = 0 ] && [ $$notebooks = 0 ]

check: $(STAMP) lint types imports

lint: $(STAMP)
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/ruff check src tests benchmarks

types: $(STAMP)
	$(VENV)/bin/mypy

imports: $(STAMP)
	$(VENV)/bin/lint-imports

unit: $(STAMP) $(CLIS) vscode-host $(NEWEST)
	$(VENV)/bin/pytest -n 2 --dist loadgroup -m "not machines"
	@# the fleet across "machines" (network namespaces) on its own: its host-lost windows need the cores
	$(VENV)/bin/pytest -p no:xdist -m machines tests/fleet/test_machines.py

notebooks: $(STAMP)
	@if ls example_notebooks/*.ipynb >/dev/null 2>&1; then \
		WATCHER_JOURNAL=$$(mktemp -d)/journal.sqlite3 $(VENV)/bin/pytest -p no:pytest-lsp -p no:xdist \
			--nbval-lax --nbval-current-env -o testpaths= example_notebooks; \
	else echo "no example notebooks yet"; fi

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

# as root (a container) Jupyter refuses to start without --allow-root; LAB_ARGS adds your own flags
lab: $(STAMP)
	$(VENV)/bin/jupyter lab example_notebooks $$( [ "$$(id -u)" = 0 ] && echo --allow-root ) $(LAB_ARGS)

# the wheel and sdist people install (pip, pipx, uv tool), checked as the package index would
dist: $(STAMP)
	rm -rf dist
	$(VENV)/bin/uv build --quiet --wheel --sdist --out-dir dist .
	$(VENV)/bin/twine check --strict dist/*

clean:
	rm -rf $(VENV) .venv-newest node_modules $(EXT)/node_modules $(EXT)/out $(VSIX) tests/vscode/host/node_modules .watcher .pytest_cache .mypy_cache .ruff_cache

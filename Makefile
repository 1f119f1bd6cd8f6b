# ndagent's tasks.  Only python3, make and git are needed: the first target that needs
# tools makes .venv and installs ndagent (editable) with its development tools into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SAMPLE := tests/fixtures/sample.ndjson
# The cores this process may run on (under taskset or a cpuset, fewer than the machine's).
CORES   = $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)')

.PHONY: all demo test golden lint install man completions bench fuzz clean ccusage chromium \
	browser screenshots pandoc transcripts

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	# ATIF's validator: Harbor's trajectory models, without Harbor's 27 run-time
	# dependencies (its tests skip where this fails: no network, Python < 3.10).
	-$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
	  --ignore-requires-python 'harbor==0.26.0'
	touch $@

demo: $(STAMP)  ## run each command on a sample stream shipped in the repository
	@echo '$$ ndagent json $(SAMPLE)              # the run as the one-object json format'
	@$(BIN)/ndagent json $(SAMPLE)
	@echo
	@echo '$$ ndagent result $(SAMPLE)            # the answer, rebuilt as it streams'
	@$(BIN)/ndagent result $(SAMPLE)
	@echo
	@echo '$$ ndagent text -v $(SAMPLE)           # one line per action, with its target'
	@$(BIN)/ndagent text -v $(SAMPLE)
	@echo
	@echo '$$ ndagent tools --format tsv --header $(SAMPLE)'
	@$(BIN)/ndagent tools --format tsv --header $(SAMPLE)
	@echo
	@echo '$$ ndagent validate $(SAMPLE)'
	@$(BIN)/ndagent validate $(SAMPLE)
	@echo
	@echo '$$ head -n 12 $(SAMPLE) | ndagent validate; echo "exit status $$?"   # a run cut off'
	@head -n 12 $(SAMPLE) | $(BIN)/ndagent validate; echo "exit status $$?"

# Two pytest processes per core: many tests wait on the processes they start (pipes,
# signals, an agent's pauses), and a second process keeps the core busy meanwhile.
test: $(STAMP)  ## the test suite (pytest): in-process and through real pipes, two processes per core
	$(BIN)/python -m pytest -q -n $(shell expr 2 \* $(CORES))

# The transcripts in the programs that show them.  'make test' runs the browser test on
# a few pages when chromium is on PATH (and skips it, saying why, when not), and the
# pandoc test when pandoc is; these targets install Debian's packages when missing.
chromium:  ## install Debian's chromium when there is no Chromium on PATH (the browser tests)
	command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { apt-get update -qq && apt-get install -y -qq chromium; }

pandoc:  ## install Debian's pandoc when missing (the Markdown transcripts' pandoc test)
	command -v pandoc >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq pandoc; }

browser: $(STAMP) chromium  ## every golden case's HTML transcript in headless Chromium, offline
	NDAGENT_BROWSER=all $(BIN)/python -m pytest -q -n auto tests/test_browser.py

transcripts: $(STAMP) chromium pandoc  ## the browser and pandoc tests of the transcripts, every case
	NDAGENT_BROWSER=all $(BIN)/python -m pytest -q -n auto tests/test_browser.py \
	  tests/test_transcript.py

screenshots: $(STAMP) chromium  ## docs/screenshots/AGENT.png: the sample runs' HTML transcripts
	$(BIN)/python tests/browser.py screenshots docs/screenshots

# CASES=AGENT/CASE ... makes only those (tests/golden/regenerate.py says more).
golden: $(STAMP)  ## tests/golden's expected outputs, from what the commands print now
	$(BIN)/python tests/golden/regenerate.py $(CASES)

bench: $(STAMP)  ## ndagent against jq on a generated 100 MB stream, in one run (BEFORE=DIR: against an earlier checkout)
	command -v jq >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq jq; }
	$(BIN)/python -m compileall -q ndagent  # as an install leaves it: start-up reads, not compiles
	$(BIN)/python tests/bench/run.py --mb 100 $(if $(BEFORE),--before $(BEFORE))

# The version of ccusage the comparison holds against (docs/agents.md#session-files):
# its native binary for linux-x64 exists on the registry from this one.
CCUSAGE_VERSION := 20.0.24
CCUSAGE := .ccusage/node_modules/.bin/ccusage

ccusage: $(CCUSAGE)  ## ccusage, for tests/test_ccusage.py and the bench's session row (npm, into .ccusage/)
$(CCUSAGE):
	npm install --prefix .ccusage --no-audit --no-fund --silent ccusage@$(CCUSAGE_VERSION)

# The tests marked at_length first, at their full sizes (memory bounds among them, too
# long for 'make test', which runs a smaller one beside each).
fuzz: $(STAMP)  ## the property tests at length (25 000 examples each, a property per core at once), and the tests at full size
	NDAGENT_EXAMPLES=2500 $(BIN)/python -m pytest -q -n $(CORES) -m at_length
	$(BIN)/python tests/fuzz/run.py --examples 25000 --round 2500 --jobs $(CORES)

lint: $(STAMP)
	$(BIN)/ruff check ndagent tests man

# The date the pages show: a fixed one, so that the pages are the same wherever they are
# made (move it on at a release).  tests/test_man.py fails when man/ is out of date.
MAN_DATE_EPOCH := 1795305600

man: $(STAMP)  ## the manual pages in man/, from the commands' own parsers (argparse-manpage)
	SOURCE_DATE_EPOCH=$(MAN_DATE_EPOCH) $(BIN)/python man/generate.py man

completions: $(STAMP)  ## bash, zsh and fish completions in ndagent/completions/, from the parsers
	$(BIN)/python man/completions.py

# 'make install': for the current user, under PREFIX.  With pipx, pipx's own install
# (pipx before 1.3.0 links no man pages: MANPATH then).  Without it, a virtual
# environment of its own, INSTALL_VENV, whose commands are linked into PREFIX/bin and
# man pages into PREFIX/share/man/man1, where man finds them beside PATH's bin: pip
# --user is refused by Debian 12 and Ubuntu 23.04 on (externally-managed-environment).
PREFIX      ?= $(HOME)/.local
INSTALL_VENV = $(PREFIX)/share/ndagent/venv
PIPX_MAN     = $${PIPX_HOME:-$$HOME/.local/pipx}/venvs/ndagent/share/man

install:  ## for the current user: pipx when there is one, else a venv of its own in PREFIX (~/.local)
	@if command -v pipx >/dev/null 2>&1; then \
	  pipx install --force . || exit 1; \
	  case "$$(pipx --version)" in 0.*|1.[012].*) \
	    echo "make install: pipx $$(pipx --version) links no man pages (1.3.0 and later do): for" \
	         "'man ndagent', export MANPATH=\"$(PIPX_MAN):\"";; esac; \
	else \
	  $(PYTHON) -m venv --clear $(INSTALL_VENV) >/dev/null 2>&1 || { \
	    echo "make install: no pipx, and $(PYTHON) cannot make a virtual environment: install" \
	         "pipx (apt install pipx) or the venv module (apt install python3-venv), then" \
	         "'make install' again" >&2; exit 1; }; \
	  $(INSTALL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check . \
	    || exit 1; \
	  mkdir -p $(PREFIX)/bin $(PREFIX)/share/man/man1 && \
	  ln -sf $(INSTALL_VENV)/bin/ndagent $(INSTALL_VENV)/bin/ndagent-* $(PREFIX)/bin/ && \
	  ln -sf $(INSTALL_VENV)/share/man/man1/ndagent*.1 $(PREFIX)/share/man/man1/ && \
	  echo "make install: ndagent is in $(PREFIX)/bin (on PATH?), its man pages in" \
	       "$(PREFIX)/share/man/man1; completion: eval \"\$$(ndagent completion bash)\""; \
	fi

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .ruff_cache

# ndagent's tasks.  Only python3, make and git are needed: the first target that needs
# tools makes .venv and installs ndagent (editable) with its development tools into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SAMPLE := tests/fixtures/sample.ndjson

.PHONY: all demo test golden lint install man completions bench fuzz clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
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

test: $(STAMP)  ## the test suite (pytest): in-process and through real pipes, a process per core
	$(BIN)/python -m pytest -q -n auto

# CASES=AGENT/CASE ... makes only those (tests/golden/regenerate.py says more).
golden: $(STAMP)  ## tests/golden's expected outputs, from what the commands print now
	$(BIN)/python tests/golden/regenerate.py $(CASES)

bench: $(STAMP)  ## ndagent against jq on a generated 100 MB stream, in one run (BEFORE=DIR: against an earlier checkout)
	command -v jq >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq jq; }
	$(BIN)/python -m compileall -q ndagent  # as an install leaves it: start-up reads, not compiles
	$(BIN)/python tests/bench/run.py --mb 100 $(if $(BEFORE),--before $(BEFORE))

fuzz: $(STAMP)  ## the robustness properties at length: 25 000 examples each, 100 000 inputs
	$(BIN)/python tests/fuzz/run.py --examples 25000 --round 2500

lint: $(STAMP)
	$(BIN)/ruff check ndagent tests man

# The date the pages show: a fixed one, so that the pages are the same wherever they are
# made (move it on at a release).  tests/test_man.py fails when man/ is out of date.
MAN_DATE_EPOCH := 1795305600

man: $(STAMP)  ## the manual pages in man/, from the commands' own parsers (argparse-manpage)
	SOURCE_DATE_EPOCH=$(MAN_DATE_EPOCH) $(BIN)/python man/generate.py man

completions: $(STAMP)  ## bash, zsh and fish completions in ndagent/completions/, from the parsers
	$(BIN)/python man/completions.py

install:  ## for a user: pipx when there is one, else pip --user
	if command -v pipx >/dev/null 2>&1; then pipx install --force .; \
	else $(PYTHON) -m pip install --user .; fi

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .ruff_cache

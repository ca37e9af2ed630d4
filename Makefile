# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
comma  := ,
EXTRAS ?= dev,plots,sweep,pld,progress
STAMP  := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: run test install bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	touch $(STAMP)

install: $(STAMP)

# The main job: the built-in default scenario, written to ./report
run: $(STAMP)
	$(BIN)/shuffledp report --out report

test: $(STAMP)
	$(BIN)/python -m pytest tests

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) report .pytest_cache .hypothesis build src/*.egg-info

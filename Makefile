# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
comma  := ,
EXTRAS ?= dev,docs,plots,sweep,pld,progress,fast,fl,opacus,flower,cluster
STAMP  := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: run test install bench clean docs

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# torch first, pinned: a bare range would let pip pick a multi-GB CUDA build.
	case '$(EXTRAS)' in *fl*|*opacus*) $(BIN)/python -m pip install --quiet --disable-pip-version-check 'torch==2.13.0' ;; esac
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	touch $(STAMP)

install: $(STAMP)

# The built-in default scenario's report, written to ./report
run: $(STAMP)
	$(BIN)/shuffledp report --out report

test: $(STAMP)
	$(BIN)/python -m pytest tests -n 2

# The documentation site (MkDocs + Material + mkdocstrings) in ./site; warnings are errors.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) report site dist .pytest_cache .mypy_cache .hypothesis build src/*.egg-info

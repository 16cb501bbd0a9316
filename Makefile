# Two commands for a reader: `make figures` and `make test`. Everything else is for writers.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# One stamp per install set, so `make lab` can add the reading tools without slowing `make test`.
TESTED := $(VENV)/.installed-test
READER := $(VENV)/.installed-read
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.py))
# nbval compares stored text outputs; these keep the kernel's numbers identical run to run.
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS := 1

.PHONY: figures test lint unit-and-notebooks check lab notebooks bench clean

$(TESTED): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $@

$(READER): $(TESTED)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,read]'
	touch $@

figures: $(TESTED)
	$(BIN)/python -m lnpaper figures

test: lint unit-and-notebooks check

lint: $(TESTED)
	$(BIN)/ruff check src tests notebooks
	$(BIN)/ruff format --check src tests

unit-and-notebooks: $(TESTED)
	$(BIN)/python -m pytest -n 2 --dist loadfile --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg tests notebooks

check: $(TESTED)
	$(BIN)/python -m lnpaper figures --check

lab: $(READER)
	$(BIN)/jupyter lab notebooks

# Bring each notebook in line with its jupytext source, then execute it in place, in order. The second
# pass merges stdout chunks and drops per-cell metadata, both of which depend on timing, so a re-run
# that changes nothing leaves git clean.
notebooks: $(TESTED)
	for src in $(NOTEBOOKS); do \
		nb=$${src%.py}.ipynb; \
		$(BIN)/jupytext --quiet --to ipynb --update $$src && \
		$(BIN)/jupyter nbconvert --log-level WARN --to notebook --inplace --execute \
			--ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False $$nb && \
		$(BIN)/jupyter nbconvert --log-level WARN --to notebook --inplace --coalesce-streams \
			--ClearMetadataPreprocessor.enabled=True \
			--ClearMetadataPreprocessor.clear_notebook_metadata=False $$nb || exit 1; \
	done

# The benchmark pins glibc's allocator itself, so notebook 06's kernel can too (src/lnpaper/bench.py);
# `python -m lnpaper bench --no-pin` times without the pin.
bench: $(TESTED)
	$(BIN)/python -m lnpaper bench

clean:
	rm -rf $(VENV) .cache build src/*.egg-info .ruff_cache .pytest_cache .hypothesis

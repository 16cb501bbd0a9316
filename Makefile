# For a reader: `make lab` (read and play) and `make test` (check). Everything else is for writers.
# Another Python in its own venv: `make unit-and-notebooks PYTHON=python3.13 VENV=.venv-py3.13`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# One stamp per install set, so `make lab` can add the reading tools without slowing `make test`.
TESTED := $(VENV)/.installed-test
READER := $(VENV)/.installed-read
NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.py))
# nbval compares stored text outputs; these keep the kernel's numbers identical run to run.
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS := 1

.PHONY: figures test quick lint unit-and-notebooks notebooks-live check reproduce record lab lab-folder notebooks book bench clean

# On Linux, PyPI's torch is a CUDA build (about 5.5 GB with its libraries); PyTorch's own CPU index
# has the same version as a CPU build of about 200 MB. Where that index answers within 3 s, torch
# comes from it first; where it does not (a machine that reaches PyPI alone), pip installs from
# PyPI as configured. The pin in constraints.txt holds either way (2.13.0+cpu satisfies 2.13.0).
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
TORCH_PIN = $(shell grep '^torch==' constraints.txt)
torch_cpu_first = if [ "$$(uname -s)" = Linux ] && $(BIN)/python -c "import urllib.request; \
	urllib.request.urlopen('$(TORCH_CPU_INDEX)/torch/', timeout=3)" 2>/dev/null; then \
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
	--index-url $(TORCH_CPU_INDEX) '$(TORCH_PIN)' || echo "no CPU build of $(TORCH_PIN) for \
	this Python on $(TORCH_CPU_INDEX): torch comes from PyPI"; fi

# The test set includes the book's tools: `make test` builds the book and checks it in a browser.
$(TESTED): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(torch_cpu_first)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,book]'
	touch $@

# Lab saves the sliders' state with a notebook, so a saved and reopened notebook shows its controls
# (set in the venv's own Lab settings, which no other Lab reads).
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
$(READER): $(TESTED)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,book,read]'
	mkdir -p $(LAB_SETTINGS)
	printf '%s\n' '{"@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": true}}' \
		> $(LAB_SETTINGS)/overrides.json
	touch $@

# A reader's own call (an argument the record lacks) runs live by default; every target that proves
# or draws the record runs strict, so a call missing from the record is an error there.
figures: $(TESTED)
	LNPAPER_RECORD=strict $(BIN)/python -m lnpaper figures

# The reproduction check writes the report the book shows, and the book is built before the tests
# that read it (tests/test_book.py).
test: lint reproduce book unit-and-notebooks notebooks-live check

# actionlint checks the CI workflow; shellcheck and pyflakes are off so every machine runs the same
# checks (GitHub's runners have shellcheck on PATH, these machines do not).
lint: $(TESTED)
	$(BIN)/ruff check src tests notebooks book
	$(BIN)/ruff format --check src tests book
	$(BIN)/actionlint -shellcheck= -pyflakes= .github/workflows/*.yml

# The inner loop, under two minutes: lint and the tests not marked slow, without the book, the
# notebooks or the reproduction check (`make test` runs them all).
quick: lint
	LNPAPER_RECORD=strict LNPAPER_DEMOS=static $(BIN)/python -m pytest -q -n 2 --dist loadfile \
		-m "not slow" tests

# The book's browser tests read book/_build, so the book is built first (from the committed
# reproduction report when `make reproduce` has not written one here).
# nbval starts each notebook's kernel over TCP, on ports just found free; two workers can pick the
# same port, and the kernel that loses dies before it answers ("Kernel died before replying to
# kernel_info"). After such a death the items that failed run once more (--last-failed); a failure
# of any other kind fails the target as it is.
KERNEL_DEATH := Kernel died before replying to kernel_info
once_more_after_a_kernel_death = log=$$(mktemp); $(1) > $$log 2>&1; status=$$?; cat $$log; \
	if [ $$status -ne 0 ] && grep -q "$(KERNEL_DEATH)" $$log; then \
	echo "a notebook's kernel died as it started: the failed items once more"; \
	$(1) --last-failed; status=$$?; fi; rm -f $$log; exit $$status

unit-and-notebooks: $(TESTED) book
	@$(call once_more_after_a_kernel_death,LNPAPER_RECORD=strict LNPAPER_DEMOS=static \
		$(BIN)/python -m pytest -rs -n 2 --dist loadfile --nbval --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg tests notebooks)

check: $(TESTED)
	LNPAPER_RECORD=strict $(BIN)/python -m lnpaper figures --check

# Every experiment recomputed and compared with the record, on another numeric path than the one
# the record was made on: `record` computes on ATEN's portable kernels, so the check runs on this
# CPU's native kernels, the fastest (where those are the portable ones too, as on a CPU without
# AVX2, it still recomputes and compares, and the report says so).
# The book shows this machine's report once `make reproduce` has written one, else the committed
# report of the last check a writer ran (`cp .cache/reproduction.md book/reproduction_report.md`).
REPORT := .cache/reproduction.md
# Each record entry's floating-point work, counted once by `python -m lnpaper work --out $(FLOPS)`
# (a multiple of the check's time, so not in `make test`): the report states the check's rate.
FLOPS := book/check_flops.json
COMMITTED_REPORT := book/reproduction_report.md
RECOMPUTED := .cache/recomputed
reproduce: $(TESTED)
	$(BIN)/python -m lnpaper reproduce --report $(REPORT) --keep $(RECOMPUTED) --flops $(FLOPS)

# Every notebook once more, on the record `make reproduce` recomputed here: outputs are not compared
# (nbval's lax mode), but every cell must run, so a figure, summary or assertion that holds only on
# the record's own numbers fails. The notebooks' assertions follow the check's rule (stats.expect,
# claims.expect): a fragile decision may land on either side of its boundary.
notebooks-live: $(TESTED)
	@test -d $(RECOMPUTED) || { echo "no recomputed record in $(RECOMPUTED): run make reproduce"; exit 1; }
	@$(call once_more_after_a_kernel_death,LNPAPER_RECORD=strict \
		LNPAPER_RECORD_DIR=$(abspath $(RECOMPUTED)) LNPAPER_DEMOS=static \
		$(BIN)/python -m pytest -q -n 2 --dist loadfile --nbval-lax --nbval-current-env notebooks)

# After a change: `make record notebooks` brings results/, the notebooks, figures/ and CLAIMS.md
# back in line. `make record NAMES="lm_training cnn_coda"` recomputes only those (and their callers).
record: $(TESTED)
	$(BIN)/python -m lnpaper record $(NAMES)
	$(BIN)/python -m lnpaper figures

# JupyterLab on a copy of the notebooks in lab/, which git ignores: what a reader types, runs and
# Lab autosaves stays there, and notebooks/ stays as committed. A pair changed in notebooks/ since
# it was copied (after a pull) replaces its copy; `rm -r lab` starts over. Writers edit the tracked
# pairs with `make lab LAB_DIR=notebooks`. Lab will not start as root without --allow-root, and
# containers often run as root. LAB_ARGS passes further options: `make lab LAB_ARGS="--no-browser
# --port 8899"`. Lab opens on the first notebook, with the folder beside it.
LAB_DIR ?= lab
lab: $(READER) lab-folder
	$(BIN)/jupyter lab $(LAB_DIR)/$(notdir $(firstword $(NOTEBOOKS:.py=.ipynb))) \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# -p keeps each pair's times, so Lab sees the .ipynb no newer than its .py; -u copies a file only
# where the copy is missing or older than notebooks/' own. The claims ledger and the common
# confusions, which the notebooks point to, are copied beside them with their links to
# notebooks/NAME made links to the copies.
lab-folder:
	@if [ "$(LAB_DIR)" != notebooks ]; then \
		mkdir -p $(LAB_DIR) && cp -p -u notebooks/jupytext.toml $(NOTEBOOKS) \
			$(NOTEBOOKS:.py=.ipynb) $(LAB_DIR)/ && \
		for page in CLAIMS.md book/confusions.md; do \
			sed 's#](notebooks/#](#g' $$page > $(LAB_DIR)/$$(basename $$page); done; fi

# Bring each notebook in line with its jupytext source, then execute it in place, in order. The second
# pass merges stdout chunks and drops per-cell metadata, both of which depend on timing, so a re-run
# that changes nothing leaves git clean; it keeps the one key a reader sees, the evidence heading's
# jp-MarkdownHeadingCollapsed, which opens the evidence folded in Lab. LNPAPER_DEMOS=static (here, in unit-and-notebooks and in
# notebooks-live): a demo's cell (lnpaper.companion.widgets.show) draws its static figure, not live
# controls, even when ipywidgets is installed and make runs from inside Lab.
notebooks: $(TESTED)
	for src in $(NOTEBOOKS); do \
		nb=$${src%.py}.ipynb; \
		$(BIN)/jupytext --quiet --to ipynb --update $$src && \
		LNPAPER_RECORD=fill LNPAPER_DEMOS=static $(BIN)/jupyter nbconvert --log-level WARN \
			--to notebook --inplace --execute \
			--ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.record_timing=False $$nb && \
		$(BIN)/jupyter nbconvert --log-level WARN --to notebook --inplace --coalesce-streams \
			--ClearMetadataPreprocessor.enabled=True \
			--ClearMetadataPreprocessor.clear_notebook_metadata=False \
			--ClearMetadataPreprocessor.preserve_cell_metadata_mask=jp-MarkdownHeadingCollapsed $$nb || exit 1; \
	done

# The executed notebooks as a static site, not re-run. MathJax comes from the npm registry at a pinned
# version and checksum; the build itself then runs with the network cut where `unshare` can cut it.
MATHJAX_VERSION := 3.2.2
MATHJAX_SHA256  := 1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09
MATHJAX := book/_mathjax/mathjax/tex-chtml.js
OFFLINE := $(shell unshare --net true 2>/dev/null && echo unshare --net --)

$(MATHJAX):
	rm -rf book/_mathjax && mkdir -p book/_mathjax
	cd book/_mathjax && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null && \
		echo "$(MATHJAX_SHA256)  mathjax-$(MATHJAX_VERSION).tgz" | sha256sum --check --quiet && \
		tar -xzf mathjax-$(MATHJAX_VERSION).tgz && mv package/es5 mathjax && \
		rm -rf package mathjax-$(MATHJAX_VERSION).tgz

book: $(TESTED) $(MATHJAX)
	rm -rf book/_build book/_generated
	$(BIN)/python book/write_gallery.py book/_generated/gallery.md
	cp $(if $(wildcard $(REPORT)),$(REPORT),$(COMMITTED_REPORT)) book/_generated/reproduction.md
	@echo "building the book $(if $(OFFLINE),with the network cut ($(OFFLINE)),(unshare unavailable: network not cut))"
	$(OFFLINE) $(BIN)/jupyter-book build --quiet --warningiserror --keep-going book

# The benchmark pins glibc's allocator itself, so notebook 07's kernel can too (src/lnpaper/bench.py);
# `python -m lnpaper bench --no-pin` times without the pin.
bench: $(TESTED)
	$(BIN)/python -m lnpaper bench

clean:
	rm -rf $(VENV) .cache build src/*.egg-info .ruff_cache .pytest_cache .hypothesis book/_build book/_generated book/_mathjax

# make demo / make test set everything up on a fresh machine (Python 3.10+, gcc).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SOURCES := setup.py pyproject.toml $(wildcard paimon_engine/_kernels/*.pyx paimon_engine/_kernels/*.pxd)

.PHONY: demo test test-compiled test-pure test-spark35 bench bench-quick docs build clean bench-report

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel "Cython>=3.0"

$(STAMP): $(PY) $(SOURCES)
	# compat mode puts the checkout on sys.path, so pkgutil (Spark's pyspark_* data-source discovery) sees
	# the top-level pyspark_paimon_engine module; the default editable finder hides it from iter_modules.
	$(PY) -m pip install --quiet -e ".[test,spark,bench,docs]" --config-settings editable_mode=compat
	touch $(STAMP)

# Incremental: recompiles only kernels whose .pyx changed since the last build.
build: $(STAMP)
	$(PY) setup.py --quiet build_ext --inplace

demo: build
	$(PY) -m paimon_engine demo

test: build test-compiled test-pure test-spark35

test-compiled:
	$(PY) -m pytest -q -p no:cacheprovider

# The kernel-level tests again with the pure-Python twins.
test-pure:
	PAIMON_ENGINE_PUREPYTHON=1 $(PY) -m pytest -q -p no:cacheprovider -m "not spark" tests/kernels

# The Spark tests again on PySpark 3.5 (read_table/write_table; the data source needs Spark 4 and is skipped):
# a second venv on the same interpreter with pyspark 3.5 and the runtime dependencies, importing this checkout
# (and the kernels `build` compiled) through PYTHONPATH.
VENV35 := .venv-spark35
STAMP35 := $(VENV35)/.installed

$(STAMP35): pyproject.toml
	$(PY) -c "import sys; print(sys._base_executable)" | xargs -I{} {} -m venv $(VENV35)
	$(VENV35)/bin/python -m pip install --quiet "pyspark>=3.5,<3.6" "pytest>=8" "pandas>=2" numpy "pyarrow>=16" \
		zstandard pyroaring xxhash mmh3 fastavro
	touch $(STAMP35)

test-spark35: build $(STAMP35)
	PYTHONPATH=$(CURDIR) $(VENV35)/bin/python -m pytest -q -p no:cacheprovider -m spark tests/spark

bench: build
	$(VENV)/bin/asv machine --yes --config asv_bench/asv.conf.json > /dev/null
	$(VENV)/bin/asv run --config asv_bench/asv.conf.json --python=same --show-stderr $(BENCH_ARGS)

docs: build
	$(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf build site .asv *.egg-info
	find paimon_engine -name '*.so' -delete
	find paimon_engine/_kernels -name '*.c' -delete

# PNG chart + Markdown table of the newest asv results (engine vs peers) into docs/. asv saves results of a
# --python=same run only with a commit hash: make bench BENCH_ARGS="--quick --set-commit-hash $$(git rev-parse HEAD)"
bench-report: build
	$(PY) asv_bench/report.py --results .asv/results --png docs/bench-report.png --markdown docs/bench-report.md

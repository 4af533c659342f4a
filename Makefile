# make demo / make test set everything up on a fresh machine (Python 3.10+, gcc).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SOURCES := setup.py pyproject.toml $(wildcard paimon_engine/_kernels/*.pyx paimon_engine/_kernels/*.pxd)

.PHONY: demo test test-compiled test-pure test-spark35 test-docs pg-tools bench bench-quick docs build clean bench-report wheel fuzz

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel "Cython>=3.0"

$(STAMP): $(PY) $(SOURCES)
	# compat mode puts the checkout on sys.path, so pkgutil (Spark's pyspark_* data-source discovery) sees
	# the top-level pyspark_paimon_engine module; the default editable finder hides it from iter_modules.
	$(PY) -m pip install --quiet -e ".[test,spark,bench,docs,fuzz]" --config-settings editable_mode=compat
	touch $(STAMP)

# Incremental: recompiles only kernels whose .pyx changed since the last build.
build: $(STAMP)
	$(PY) setup.py --quiet build_ext --inplace

demo: build
	$(PY) -m paimon_engine demo

# The suite includes tests/docs: every page's examples run as pasted, and the site builds with --strict;
# test-spark35 runs the Spark tests again on PySpark 3.5.
test: build test-compiled test-pure test-spark35

test-compiled: pg-tools
	$(PY) -m pytest -q -p no:cacheprovider

# The SQL catalog tests start a throwaway PostgreSQL server (initdb, pg_ctl): installed from the system's
# packages when the machine has none and this runs as root.
pg-tools:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } || \
	  echo "PostgreSQL (initdb, pg_ctl) is missing: the SQL catalog tests on PostgreSQL will fail"

# The kernel-level tests again with the pure-Python twins.
test-pure:
	PAIMON_ENGINE_PUREPYTHON=1 $(PY) -m pytest -q -p no:cacheprovider -m "not spark" tests/kernels

# The Spark tests again on PySpark 3.5 (read_table/write_table; the data source needs Spark 4 and is skipped):
# a second venv on the same interpreter with pyspark 3.5 and the runtime dependencies, importing this checkout
# (and the kernels `build` compiled) through PYTHONPATH.
VENV35 := .venv-spark35
STAMP35 := $(VENV35)/.installed

$(STAMP35): pyproject.toml
	"$$($(PY) -c 'import sys; print(sys._base_executable)')" -m venv $(VENV35)
	$(VENV35)/bin/python -m pip install --quiet "pyspark>=3.5,<3.6" "pytest>=8" "pandas>=2" numpy "pyarrow>=16" \
		zstandard pyroaring xxhash mmh3 fastavro "sqlalchemy>=2.0" "pyyaml>=6" "psycopg[binary]>=3.1" \
		starlette uvicorn requests
	touch $(STAMP35)

test-spark35: build $(STAMP35)
	PYTHONPATH=$(CURDIR) $(VENV35)/bin/python -m pytest -q -p no:cacheprovider -m spark tests/spark

# The package is byte-compiled first, as an installed wheel is, so that the cold (fresh interpreter) benchmarks
# do not count compiling its sources where the peers' installed packages have theirs compiled.
bench: build
	$(PY) -m compileall -q paimon_engine
	$(VENV)/bin/asv machine --yes --config asv_bench/asv.conf.json > /dev/null
	$(VENV)/bin/asv run --config asv_bench/asv.conf.json --python=same --show-stderr $(BENCH_ARGS)

# The source distribution and a wheel for this machine, into dist/ (see docs/install.md).
wheel: $(PY)
	$(PY) -m pip install --quiet build
	$(PY) -m build --outdir dist

# Offline: no web fonts (theme.font: false) and material's offline plugin; the API pages come from docstrings.
docs: build
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# Only the documentation: each page's examples in a fresh interpreter, then the strict site build.
test-docs: build
	$(PY) -m pytest -q -p no:cacheprovider tests/docs

clean:
	rm -rf build dist site .asv *.egg-info
	find paimon_engine -name '*.so' -delete
	find paimon_engine/_kernels -name '*.c' -delete

# PNG chart + Markdown table of the newest asv results (engine vs peers) into docs/. asv saves results of a
# --python=same run only with a commit hash: make bench BENCH_ARGS="--quick --set-commit-hash $$(git rev-parse HEAD)"
# BEFORE=<commit> [AFTER=<commit>, default HEAD] adds a before/after table of the engine's results at two commits
# (commas merge several commits of one side), taken from COMPARE=<results folder> when given (runs of one suite
# at both commits, kept apart from .asv/results).
bench-report: build
	$(PY) asv_bench/report.py --results .asv/results --png docs/bench-report.png --markdown docs/bench-report.md \
		$(if $(BEFORE),--before $(BEFORE) --after $(or $(AFTER),$(shell git rev-parse HEAD))) \
		$(if $(COMPARE),--compare-results $(COMPARE))

# Fuzz every decoder (fuzz/targets.py), one target at a time: FUZZ_SECONDS per target (default 60) or FUZZ_RUNS
# inputs; FUZZ_TARGETS=a,b picks targets, FUZZ_ARGS passes more options (--pure, --engine hypothesis, ...).
# Findings are saved under tests/data/fuzz/<target>/ (replayed by make test) and fail the run.
FUZZ_SECONDS ?=
FUZZ_RUNS ?=
FUZZ_TARGETS ?=
fuzz: build
	$(PY) -m fuzz.run $(if $(FUZZ_SECONDS),--seconds $(FUZZ_SECONDS)) $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS)) \
		$(if $(FUZZ_TARGETS),--targets $(FUZZ_TARGETS)) $(FUZZ_ARGS)

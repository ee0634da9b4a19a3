VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo serve test test-fast lint format typecheck schemas layout-doc bench chaos soak races-soak fuzz-soak histories clean

setup:
	python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[test]'
	touch $(VENV)/.test-extras-installed

demo:
	./quickstart.sh

serve:
	$(VENV)/bin/memoryctl serve

# The whole suite, as CI runs it (README command 2).
test:
	./run-tests.sh

# The inner loop: the store, parsing, schemas, structure, the API and the workflows on
# the dev and time-skipping servers, without the tests marked slow (a few minutes).
FAST_TESTS := tests/memory tests/schemas tests/architecture tests/runtime tests/api tests/workflows
test-fast:
	./run-tests.sh -m "not slow" $(FAST_TESTS)

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .

format:
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck:
	$(VENV)/bin/mypy .

schemas:
	$(PY) -m schemas.export

# docs/architecture.md's Layout, from every module's docstring.
layout-doc:
	$(PY) -m tests.support.layout_doc

# Kill workers and restart PostgreSQL and Temporal while every workflow kind runs (chaos/).
chaos:
	$(PY) -m chaos

# Long runs beside CI's: the chaos soak, every fuzzer at 10,000 cases, the race soak.
soak: fuzz-soak races-soak
	$(PY) -m chaos --soak

fuzz-soak:
	FUZZ_CASES=10000 ./run-tests.sh tests/reliability/test_fuzz_cron.py \
		tests/reliability/test_fuzz_http.py tests/reliability/test_fuzz_memoryctl.py \
		tests/reliability/test_fuzz_store.py tests/reliability/test_fuzz_workflow_inputs.py

# Every pair of maintenance operations on one memoryRef, 200 trials per pair (tests/support/races.py).
races-soak:
	$(PY) -m tests.support.races --soak

histories:
	$(PY) -m tests.support.record_histories

bench:
	$(PY) -m benchmarks.adapter_bench
	$(PY) -m benchmarks.distillation_bench
	$(PY) -m benchmarks.forget_bench
	$(PY) -m benchmarks.consolidation_bench
	$(PY) -m benchmarks.time_corpora.fetch
	$(PY) -m benchmarks.commitment_parser_bench
	$(PY) -m benchmarks.commitments_bench
	$(PY) -m benchmarks.predicate_watch_bench
	$(PY) -m benchmarks.http_bench
	$(PY) -m benchmarks.codec_bench
	$(PY) -m benchmarks.similarity_corpora.fetch
	$(PY) -m benchmarks.semantic_accuracy_bench
	$(PY) -m benchmarks.routine_bench
	$(PY) -m benchmarks.restatement_distill_bench
	$(PY) -m benchmarks.embedding_bench
	$(PY) -m benchmarks.search_bench
	$(PY) -m benchmarks.inference_watermark_bench

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache

VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo serve test lint format typecheck schemas bench chaos soak races-soak histories clean

setup:
	python3 -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[test]'
	touch $(VENV)/.test-extras-installed

demo:
	./quickstart.sh

serve:
	$(VENV)/bin/memoryctl serve

test:
	./run-tests.sh

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

# Kill workers and restart PostgreSQL and Temporal while every workflow kind runs (chaos/).
chaos:
	$(PY) -m chaos

soak:
	$(PY) -m chaos --soak

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

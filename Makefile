# Every target sets itself up: a .venv made with the machine's python3 and the
# pinned requirements in requirements/. Nothing needs to be installed by hand.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
REQS   := $(wildcard requirements/*.txt)
PYTEST_ARGS ?=

export PYTHONUNBUFFERED := 1
export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: all venv test check lint typecheck unit integration integration-tansu integration-kafka \
	kafka-broker matrix demo bench clean

all: test

venv: $(STAMP)

$(STAMP): $(REQS) setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade "pip==24.3.1"
	$(PY) -m pip install --quiet --disable-pip-version-check $(foreach r,$(REQS),-r $(r))
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

## The whole test suite: lint, types, fast tier, real-broker tier, client-version matrix.
test: lint typecheck unit integration matrix

## The fast tier, before the long ones: lint, types, unit tests without Spark (a few minutes).
check: lint typecheck
	$(PY) -m pytest tests -q -m "not spark" -p no:cacheprovider $(PYTEST_ARGS)

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check kafka_sticky_plugin

typecheck: venv
	$(PY) -m mypy

unit: venv
	$(PY) -m pytest tests $(PYTEST_ARGS)

## The real-broker tier, once on each broker: the embedded Tansu broker, then Apache Kafka.
integration: integration-tansu integration-kafka

integration-tansu: venv
	KAFKA_STICKY_BROKER=embedded $(PY) -m pytest integration_tests \
		--ignore=integration_tests/hooks --ignore=integration_tests/aiokafka $(PYTEST_ARGS)

## Apache Kafka (KRaft, from Maven Central's jars): skipped with one line where there is no
## java or mvn, a failure under CI=true (see scripts/kafka_runtime.sh).
integration-kafka: venv
	@rc=0; bash scripts/kafka_runtime.sh || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
		KAFKA_STICKY_BROKER=kafka $(PY) -m pytest integration_tests \
			--ignore=integration_tests/hooks --ignore=integration_tests/aiokafka $(PYTEST_ARGS); \
	elif [ $$rc -ne 2 ]; then exit $$rc; fi

## Apache Kafka's broker jars in build/jvm/kafka-broker (a no-op when they are there).
kafka-broker:
	bash scripts/kafka_runtime.sh

## One virtual environment per supported kafka-python version (see scripts/version_matrix.sh).
matrix: venv
	bash scripts/version_matrix.sh

## The main job: a demo on the embedded broker (BROKER=kafka: the same on Apache Kafka).
BROKER ?= embedded
demo: venv
	@if [ "$(BROKER)" = kafka ]; then bash scripts/kafka_runtime.sh; fi
	$(PY) -m kafka_sticky_plugin demo --broker $(BROKER) $(DEMO_ARGS)

bench: venv
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .venvs .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist *.egg-info

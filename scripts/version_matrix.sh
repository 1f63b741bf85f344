#!/usr/bin/env bash
# The client-version matrix: one virtual environment per supported Kafka client version,
# each created from its pinned file in requirements/matrix/, then that client's hook tests run
# inside it. The pins file's name prefix says which client and which tests:
#   aiokafka-*   tests/aiokafka and integration_tests/aiokafka (client version: aiokafka)
#   anything else (kafka-python-*, kafka-python-ng-*): tests/hooks and integration_tests/hooks
#
# - A venv lives in .venvs/<name> (name = the pins file's base name) and is reused while the
#   sha256 of its pins file is unchanged (recorded in .venvs/<name>/.pins.sha256).
# - The project itself is not installed into the matrix venvs: PYTHONPATH points at the
#   checkout, so the code under test is always the working tree.
# - Exit status: non-zero if any version fails; every version runs even after a failure.
#
# Environment:
#   PYTHON            interpreter used to create the venvs (default: python3)
#   MATRIX_ONLY       space-separated names to run (default: every requirements/matrix/*.txt)
#   MATRIX_PYTEST_ARGS extra pytest arguments (default: -q)
#   MATRIX_UNIT=0     skip the hooks' unit tests (a lane that only adds a broker)
#   MATRIX_BROKER_ONLY space-separated names whose real-broker tests run (default: every name);
#                     the others run their unit tests only (`make test` runs every version on
#                     Apache Kafka and only the newest ones on the embedded Tansu broker)
#   MATRIX_SETUP_ONLY=1  create (or check) the venvs and stop: `make test` does this once
#                     before it runs the two broker lanes in parallel
#   MATRIX_BROKERS    brokers the real-broker tests run on, in turn (default: "embedded kafka":
#                     the embedded Tansu broker, then Apache Kafka from build/jvm/kafka-broker,
#                     which scripts/kafka_runtime.sh resolves; skipped with one line where
#                     java or mvn is missing, a failure under CI=true)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
PIP_FLAGS=(--quiet --disable-pip-version-check)
read -r -a PYTEST_EXTRA <<<"${MATRIX_PYTEST_ARGS:--q}"

ensure_venv() {
    local name="$1" pins="$2" venv=".venvs/$1"
    local want have=""
    want="$(sha256sum "$pins" | cut -d' ' -f1)"
    [[ -f "$venv/.pins.sha256" ]] && have="$(cat "$venv/.pins.sha256")"
    if [[ -x "$venv/bin/python" && "$want" == "$have" ]]; then
        return 0
    fi
    echo "== $name: creating $venv from $pins"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    "$venv/bin/python" -m pip install "${PIP_FLAGS[@]}" -r "$pins"
    echo "$want" >"$venv/.pins.sha256"
}

run_one() {
    local name="$1" venv=".venvs/$1"
    local version client="kafka" unit_dir="tests/hooks" broker_dir="integration_tests/hooks"
    if [[ "$name" == aiokafka-* ]]; then
        client="aiokafka" unit_dir="tests/aiokafka" broker_dir="integration_tests/aiokafka"
    fi
    version="$("$venv/bin/python" -c "import $client; print($client.__version__)")"
    echo "== $name: $client client $version"
    if [[ ! -d "$unit_dir" || ! -d "$broker_dir" ]]; then
        echo "== $name: no hook tests found ($unit_dir, $broker_dir)" >&2
        return 1
    fi
    # -p no:cacheprovider: the matrix venvs share the checkout; keep their runs independent.
    # The unit tests run once, the real-broker tests once per broker.
    local broker status=0
    if [[ "${MATRIX_UNIT:-1}" != 0 ]]; then
        PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" \
            "$venv/bin/python" -m pytest -p no:cacheprovider "${PYTEST_EXTRA[@]}" "$unit_dir" \
            || status=1
    fi
    if [[ -n "${MATRIX_BROKER_ONLY:-}" && " $MATRIX_BROKER_ONLY " != *" $name "* ]]; then
        echo "== $name: real-broker hook tests not run on ${brokers[*]} (MATRIX_BROKER_ONLY)"
        return $status
    fi
    for broker in "${brokers[@]}"; do
        echo "== $name: real-broker hook tests on $broker"
        KAFKA_STICKY_BROKER="$broker" PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" \
            "$venv/bin/python" -m pytest -p no:cacheprovider "${PYTEST_EXTRA[@]}" \
            ${BROKER_RERUNS:-} "$broker_dir" || status=1
    done
    return $status
}

read -r -a wanted_brokers <<<"${MATRIX_BROKERS:-embedded kafka}"
brokers=()
for broker in "${wanted_brokers[@]}"; do
    if [[ "$broker" == kafka ]]; then
        rc=0
        bash scripts/kafka_runtime.sh || rc=$?
        if [[ $rc -eq 2 ]]; then continue; elif [[ $rc -ne 0 ]]; then exit "$rc"; fi
    fi
    brokers+=("$broker")
done

mkdir -p .venvs
names=()
if [[ -n "${MATRIX_ONLY:-}" ]]; then
    read -r -a names <<<"$MATRIX_ONLY"
else
    for f in requirements/matrix/*.txt; do
        names+=("$(basename "$f" .txt)")
    done
fi

if [[ "${MATRIX_SETUP_ONLY:-}" == 1 ]]; then
    for name in "${names[@]}"; do
        ensure_venv "$name" "requirements/matrix/$name.txt"
    done
    echo "version matrix: ${#names[@]} venvs ready"
    exit 0
fi

failed=()
start=$SECONDS
for name in "${names[@]}"; do
    t0=$SECONDS
    if ensure_venv "$name" "requirements/matrix/$name.txt" && run_one "$name"; then
        echo "== $name: ok in $((SECONDS - t0)) s"
    else
        echo "== $name: FAILED in $((SECONDS - t0)) s"
        failed+=("$name")
    fi
done
echo "version matrix: ${#names[@]} versions on ${brokers[*]} in $((SECONDS - start)) s; failed: ${failed[*]:-none}"
[[ ${#failed[@]} -eq 0 ]]

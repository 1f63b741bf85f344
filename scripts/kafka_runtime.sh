#!/usr/bin/env bash
# Make Apache Kafka's broker runnable from this checkout: copy the runtime jars of the pinned
# artifacts in jvm/kafka-broker/pom.xml into build/jvm/kafka-broker/ with Maven's defaults.
# A second run with the same pom.xml is a no-op (its sha256 is kept beside the jars).
#
# Exit status: 0 ready; 2 Apache Kafka cannot run here (no java or no mvn; one line says
# which) and CI is not set, so the caller skips the Apache Kafka tier; 1 anything else, and
# also "cannot run here" under CI=true, where a skipped Apache Kafka tier is a failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
POM="$ROOT/jvm/kafka-broker/pom.xml"
LIBS="$ROOT/build/jvm/kafka-broker"

missing=()
command -v java >/dev/null 2>&1 || missing+=(java)
command -v mvn >/dev/null 2>&1 || missing+=(mvn)
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "Apache Kafka tier skipped: no ${missing[*]} on PATH (it needs Java 17+ and Maven)" >&2
    [[ "${CI:-}" == "true" ]] && { echo "CI=true: the Apache Kafka tier must run" >&2; exit 1; }
    exit 2
fi

want="$(sha256sum "$POM" | cut -d' ' -f1)"
if [[ -f "$LIBS/.pom.sha256" && "$(cat "$LIBS/.pom.sha256")" == "$want" ]]; then
    exit 0
fi
echo "== resolving Apache Kafka's jars (jvm/kafka-broker/pom.xml) into build/jvm/kafka-broker"
rm -rf "$LIBS"
mkdir -p "$LIBS"
# Maven 3.8 prints colour resets even in batch mode: strip escape sequences from its output.
mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies \
    -DoutputDirectory="$LIBS" -DincludeScope=runtime </dev/null 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
test "${PIPESTATUS[0]}" -eq 0
ls "$LIBS"/kafka_2.13-*.jar >/dev/null
echo "$want" >"$LIBS/.pom.sha256"

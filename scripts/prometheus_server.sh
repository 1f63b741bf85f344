#!/usr/bin/env bash
# Install the Prometheus server the metrics tier scrapes with (Debian's package, pinned), so
# integration_tests/metrics/test_metrics_prometheus.py can start a real one on loopback.
# A second run with the pinned version installed is a no-op.
#
# Exit status: 0 ready; 2 it cannot be installed here (no apt-get, or not root; one line
# says which) and CI is not set, so the Prometheus test skips; 1 anything else, and also
# "cannot be installed here" under CI=true, where a skipped Prometheus test is a failure.
set -euo pipefail
VERSION="2.42.0+ds-5+deb12u1"

installed="$(dpkg-query -W -f='${Version}' prometheus 2>/dev/null || true)"
if [[ "$installed" == "$VERSION" ]]; then
    exit 0
fi
why=""
command -v apt-get >/dev/null 2>&1 || why="no apt-get (Debian's prometheus package is used)"
[[ -z "$why" && "$(id -u)" -ne 0 ]] && why="apt-get needs root"
if [[ -n "$why" ]]; then
    echo "Prometheus server not installed: $why; the real-Prometheus test will skip" >&2
    [[ "${CI:-}" == "true" ]] && { echo "CI=true: the Prometheus test must run" >&2; exit 1; }
    exit 2
fi
echo "== installing prometheus=$VERSION (Debian)"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends "prometheus=$VERSION" >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "prometheus=$VERSION" >/dev/null
fi
# The package starts its own service where an init system runs one: the test starts its
# own server on another port and never talks to that one.
prometheus --version 2>&1 | head -1

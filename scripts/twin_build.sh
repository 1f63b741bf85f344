#!/usr/bin/env bash
# The compiled twin's tier (twin/: Rust, PyO3, maturin): cargo fmt --check, clippy with
# warnings as errors and the crate's own tests; then this machine's abi3 wheel and the twin's
# sdist in build/twin/, `twine check` on them and on the main package's wheel and sdist (the
# release workflow's checks, .github/workflows/twin-wheels.yml, on the local platform), and
# the wheel installed into .venv so the suite's differential tests and the benchmark use it.
# A second run with the same sources and that wheel's module still installed is a no-op (the
# sources' and the installed module's sha256 are kept in build/twin/.installed.sha256).
#
# Exit status: 0 ready; 2 the twin cannot be built here (no cargo; one line says so) and CI
# is not set, so the suite runs the reference alone and the twin's tests skip; 1 anything
# else, and also "cannot be built here" under CI=true, where a skipped twin tier is a failure.
set -euo pipefail
# Any failing step exits 1 (never 2, which means "skipped").
trap 'echo "twin tier failed (scripts/twin_build.sh line $LINENO)" >&2; exit 1' ERR
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
OUT="$ROOT/build/twin"

# rustup installs cargo in ~/.cargo/bin, which a non-login shell may not have on PATH.
if ! command -v cargo >/dev/null 2>&1 && [[ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]]; then
    export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "twin tier skipped: no cargo on PATH (Rust 1.85+ builds twin/); the reference runs alone" >&2
    [[ "${CI:-}" == "true" ]] && { echo "CI=true: the twin tier must run" >&2; exit 1; }
    exit 2
fi

cd "$ROOT"
want="$(cat twin/Cargo.toml twin/Cargo.lock twin/pyproject.toml twin/README.md twin/src/*.rs \
    setup.cfg README.md | sha256sum | cut -d' ' -f1)"
installed_module() {
    "$PY" -c 'import glob, hashlib, os, kafka_sticky_plugin_twin as t
(so,) = glob.glob(os.path.join(os.path.dirname(t.__file__), "*.so"))
print(hashlib.sha256(open(so, "rb").read()).hexdigest())' 2>/dev/null || true
}
if [[ -f "$OUT/.installed.sha256" && "$(cat "$OUT/.installed.sha256")" == "$want $(installed_module)" ]]; then
    exit 0
fi
echo "== the twin: cargo fmt --check, clippy, cargo test (twin/)"
cargo fmt --manifest-path twin/Cargo.toml --check
cargo clippy --manifest-path twin/Cargo.toml --locked --all-targets -q -- -D warnings
cargo test --manifest-path twin/Cargo.toml --locked -q 2>&1 | grep -E '^test result|FAILED|panicked' || true
test "${PIPESTATUS[0]}" -eq 0

echo "== the twin: this machine's wheel and the sdist (maturin), twine check (both packages)"
rm -rf "$OUT/dist" "$OUT/main-dist"
"$PY" -m maturin build --release --locked --quiet -m twin/Cargo.toml --out "$OUT/dist" 2>&1 \
    | grep -v '^\s*$' | tail -n 1
"$PY" -m maturin sdist -m twin/Cargo.toml --out "$OUT/dist" 2>&1 | tail -n 1
wheels=("$OUT"/dist/kafka_sticky_plugin_twin-*-cp310-abi3-*.whl)
[[ -f "${wheels[0]}" ]] || { echo "no abi3 wheel in $OUT/dist" >&2; exit 1; }
# The main package, as the release workflow builds it (setuptools' PEP 517 hooks, no
# download: the build tools are pinned in requirements/base.txt).
for hook in build_sdist build_wheel; do
    "$PY" -c "import sys; from setuptools import build_meta; build_meta.$hook(sys.argv[1])" \
        "$OUT/main-dist" >/dev/null 2>&1
done
"$PY" -m twine --no-color check --strict "$OUT"/dist/* "$OUT"/main-dist/*
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "${wheels[0]}"
KAFKA_STICKY_PURE_PYTHON= "$PY" -c 'from kafka_sticky_plugin.codec import implementation as i; assert i.IMPLEMENTATION == "compiled", i.describe(); print(i.describe())'
echo "$want $(installed_module)" >"$OUT/.installed.sha256"

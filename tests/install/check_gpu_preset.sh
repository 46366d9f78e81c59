#!/usr/bin/env bash
# The gpu preset (CMakePresets.json) as CI builds it here, against Debian's CPU libtorch
# with the optional parts off, so that it cannot rot: what a GPU user builds with only
# CUDA, CMake, PyTorch and the header-only libraries.
#   check_gpu_preset.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "gpu preset check: $*" >&2; exit 1; }

for exe in kairos-cli kairos-live kairos-gpu-check; do
  [ -x "$build/bin/$exe" ] || fail "no $build/bin/$exe"
done
[ ! -e "$build/bin/kairos" ] || fail "the workbench was built (it needs Qt)"
# Nothing optional linked: no Qt 6, SQLite's store, Ceres or XGBoost in what it built.
# (Debian's libtorch brings its own libraries; kairos-cli links no libtorch at all.)
for exe in kairos-cli kairos-gpu-check kairos-live; do
  if ldd "$build/bin/$exe" | grep -E 'libQt6|libceres|libxgboost'; then
    fail "$exe links an optional library"
  fi
done
ldd "$build/bin/kairos-cli" | grep -E 'libsqlite3|libtorch' && fail "kairos-cli links SQLite or libtorch"

# kairos-gpu-check: on this CPU the kernel and transformer comparisons say why they did
# not run, and the timings run on the CPU.
"$build/bin/kairos-gpu-check" --model tiny --batches 1,8 --context 64 --prefill 32,128 \
  --repeats 2 --warmup 1 --json "$tmp/check.json" > "$tmp/check.txt"
grep -q 'not run: ' "$tmp/check.txt" || fail "no reason given for the skipped comparisons"
python3 - "$tmp/check.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["passed"] is True, j
assert len(j["decode"]["steps"]) == 2 and all(s["seconds"] > 0 for s in j["decode"]["steps"])
assert all(s["bound_seconds"] > 0 for s in j["decode"]["steps"])
assert [p["tokens"] for p in j["prefill"]] == [32, 128]
EOF
# Bad input: exit 2 naming the option; --require-gpu fails without one.
set +e
"$build/bin/kairos-gpu-check" --dtype fp8 > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- '--dtype' "$tmp/err" || fail "--dtype fp8: exit $rc"
"$build/bin/kairos-gpu-check" --require-gpu > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "--require-gpu without a GPU: exit $rc"

# The store's commands are absent and its options refuse themselves before anything runs.
"$build/bin/kairos-cli" runs list > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "runs: exit $rc (the command should be absent)"
"$build/bin/kairos-cli" simulate -w "$src/sample_traces/chat_poisson_small.jsonl" \
  --db "$tmp/k.db" --quiet 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'no store' "$tmp/err" || fail "simulate --db: exit $rc"
[ ! -e "$tmp/k.db" ] || fail "simulate --db wrote a database"
"$build/bin/kairos-cli" fit ala --data x.csv > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "fit ala: exit $rc (ALA is off)"
"$build/bin/kairos-cli" reproduce ala > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "reproduce ala: exit $rc (ALA is off)"
set -e

# What is there works: a simulation, and a live run handed to kairos-live.
"$build/bin/kairos-cli" simulate -w "$src/sample_traces/chat_poisson_small.jsonl" \
  --profile llama2-70b-a100x4 --quiet --json "$tmp/s.json"
grep -q '"completed": 400' "$tmp/s.json" || fail "simulate did not complete 400 requests"
"$build/bin/kairos-cli" live -w "$src/sample_traces/chat_poisson_small.jsonl" --limit 4 \
  --model tiny --quiet --json "$tmp/live.json"
grep -q '"completed": 4' "$tmp/live.json" || fail "live did not complete 4 requests"
echo "gpu preset check: ok"

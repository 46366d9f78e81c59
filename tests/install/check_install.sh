#!/usr/bin/env bash
# Installs the build into a scratch prefix and runs what a user would: the CLI's version,
# a simulation on a shipped profile (found in the installed share/, not the source tree),
# the workbench offscreen writing a screenshot; validates the .desktop file and metainfo.
#   check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
export KAIROS_INSTALLED_ONLY=1 QT_QPA_PLATFORM=offscreen
"$prefix/bin/kairos-cli" --version | grep -q '^kairos-cli '
"$prefix/bin/kairos-cli" simulate -w "$src/sample_traces/chat_poisson_small.jsonl" \
  --profile llama2-70b-a100x4 --quiet --json "$prefix/s.json"
grep -q '"completed": 400' "$prefix/s.json"
# The shipped experiment files, found in the installed share/ (repro/experiment.h).
"$prefix/bin/kairos-cli" reproduce --list | grep -q "$prefix/share/kairos/experiments/trail_fig7_burst.toml"
# The commands that run a model are handed to kairos-live beside it (it links libtorch;
# kairos-cli does not).
if [ -x "$prefix/bin/kairos-live" ]; then
  "$prefix/bin/kairos-cli" profile --help | grep -q 'Measure the live engine'
  if ldd "$prefix/bin/kairos-cli" | grep -q libtorch; then
    echo "install check: kairos-cli links libtorch" >&2
    exit 1
  fi
fi
# Charts are drawn by kairos-report beside it (Qt's widgets; kairos-cli links no Qt).
if [ -x "$prefix/bin/kairos-report" ]; then
  if ldd "$prefix/bin/kairos-cli" | grep -q libQt6; then
    echo "install check: kairos-cli links Qt" >&2
    exit 1
  fi
  "$prefix/bin/kairos-cli" report -w "$src/sample_traces/chat_poisson_small.jsonl" --quiet \
    --html "$prefix/r.html" 2>/dev/null
  grep -q 'data:image/svg+xml' "$prefix/r.html"
fi
"$prefix/bin/kairos" --workload "$src/sample_traces/chat_poisson_small.jsonl" --policy sprpt_lp \
  --screenshot "$prefix/shot.png" --quit --size 800x600 2>/dev/null | grep -q saved
test "$(stat -c %s "$prefix/shot.png")" -gt 20000
test -f "$prefix/share/icons/hicolor/scalable/apps/kairos.svg"
desktop-file-validate "$prefix/share/applications/org.kairosproject.Kairos.desktop"
appstreamcli validate --no-net "$prefix/share/metainfo/org.kairosproject.Kairos.metainfo.xml" > /dev/null
echo "install check: ok ($prefix)"

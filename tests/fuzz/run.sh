#!/usr/bin/env bash
# Runs every fuzz target for a few seconds, seeded with the shipped samples and a few
# lines of each real trace. Usage: run.sh BIN_DIR SECONDS
set -euo pipefail
bin=$1; secs=${2:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${KAIROS_DATA_DIR:-$root/../shared/data}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
seed() { # seed NAME FILE...
  mkdir -p "$work/$1"
  local i=0
  for f in "${@:2}"; do [ -f "$f" ] && head -c 16384 "$f" > "$work/$1/seed$((i++))"; done
  echo x > "$work/$1/empty"
}
seed kairos "$root"/sample_traces/*.jsonl
# Every registered format (kairos-cli formats): its sample and, where ../shared/data has
# one, the start of a real trace, each behind the byte that picks the format (its row).
mkdir -p "$work/formats"
cli="$root/build/bin/kairos-cli"
i=0
for name in $("$cli" formats --names 2>/dev/null || true); do
  byte=$(printf '\\%03o' "$i")
  { printf "$byte"; "$cli" formats --sample "$name"; } > "$work/formats/$name-sample"
  case $name in
    azure) files=("$data/AzureLLMInferenceTrace_conv_2023.csv" "$data/AzureLLMInferenceTrace_code_2023.csv") ;;
    mooncake) files=("$data/mooncake_conversation_trace.jsonl") ;;
    lengths) files=("$data/sharegpt_8k_lengths_llama2.csv" "$data/arxiv_summarization_lengths_llama2.csv") ;;
    *) files=() ;;
  esac
  k=0
  for f in "${files[@]}"; do
    [ -f "$f" ] && { printf "$byte"; head -c 16384 "$f"; } > "$work/formats/$name-$((k++))"
  done
  i=$((i + 1))
done
seed timelyllm "$data/timelyllm/timelyllm_workload_25agents.json"
seed runlog
"$root/build/bin/kairos-cli" simulate -q -w "$root/sample_traces/offline_batch.jsonl" --limit 5 --runlog "$work/runlog/seed0" 2>/dev/null || true
"$root/build/bin/kairos-cli" simulate -q -w "$root/sample_traces/offline_batch.jsonl" --limit 5 --policy sprpt_lp --predictor trail --explain --runlog "$work/runlog/seed1" 2>/dev/null || true
seed safetensors
# One F32 tensor of 2 values: the 8-byte header size (66), the header, 8 data bytes.
{ printf 'B\0\0\0\0\0\0\0'; printf '{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}            '; printf '\0\0\200?\0\0\0@'; } > "$work/safetensors/seed0"
seed runspec "$root"/sample_traces/*.toml
"$root/build/bin/kairos-cli" simulate -q -w "$root/sample_traces/offline_batch.jsonl" --limit 5 --save-spec "$work/runspec/seed1.toml" 2>/dev/null || true
"$root/build/bin/kairos-cli" simulate -q -w "$root/sample_traces/offline_batch.jsonl" --limit 5 --policy sprpt_lp --param C=0.5 --save-spec "$work/runspec/seed2.json" 2>/dev/null || true
# The bad-input corpus's inputs (tests/badinput, the cases with a fuzz: line), through
# the dev build's runner, which knows the case format.
if [ -x "$root/build/bin/tst_badinput" ]; then
  KAIROS_FUZZ_SEEDS="$work" "$root/build/bin/tst_badinput" > /dev/null 2>&1 || true
fi
status=0
seed filter
i=0
for q in "killed" "ttft>2000 class=urgent" "!preempted phase=queued" "17" "e2el<=3e4 prompt>100 slo"; do
  printf '%s' "$q" > "$work/filter/q$((i++))"
done
for t in formats kairos timelyllm runlog safetensors runspec filter; do
  # The formats target holds several readers: three times the others' time.
  t_secs=$secs; [ "$t" = formats ] && t_secs=$((secs * 3))
  echo "fuzz_$t: ${t_secs}s"
  # Crash reproducers land in $work/crashes; the log keeps libFuzzer's report.
  mkdir -p "$work/crashes"
  # Inputs up to 300 KB: enough for JSON nested 100,000 deep (the seeds have such). Under
  # ASan the timelyllm target's resident memory climbs to 0.55 GB in 25 s on the seeds
  # alone (its quarantine and the corpus, measured), and one CI run passed libFuzzer's
  # default 2 GB there; 4 GB is still far below the machine (23 GB) and any real runaway.
  if "$bin/fuzz_$t" -max_total_time="$t_secs" -max_len=300000 -rss_limit_mb=4096 \
       -print_final_stats=1 \
       -artifact_prefix="$work/crashes/$t-" "$work/$t" > "$work/$t.log" 2>&1; then
    grep -E "stat::number_of_executed_units" "$work/$t.log" || true
  else
    # Reported after every target has run, CI showing the end of its output only: the whole
    # input, compressed (base64 -d | gunzip > in; fuzz_$t in reproduces it), then the
    # project's frames in every stack of the report, by count (an out-of-memory report lists
    # the largest allocation sites).
    { echo "fuzz_$t FAILED:"; grep -A30 -E "ERROR|runtime error" "$work/$t.log" | head -60
    for c in "$work"/crashes/$t-*; do
      [ -f "$c" ] || continue
      echo "fuzz_$t: the input ($(stat -c %s "$c") bytes; base64 -d | gunzip):"
      gzip -9nc "$c" | base64 -w 120 | head -400
    done
    echo "fuzz_$t: the project's frames in the report, by count:"
    grep -oE " in kairos::[^(]*" "$work/$t.log" | sort | uniq -c | sort -rn | head -15 || true
    grep -m1 -E "ERROR" "$work/$t.log" || true; } >> "$work/failures"
    echo "fuzz_$t FAILED (reported below)"
    status=1
  fi
done
[ -f "$work/failures" ] && cat "$work/failures"
[ $status -eq 0 ] && echo "fuzz: all targets clean"
exit $status

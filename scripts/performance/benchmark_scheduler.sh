#!/usr/bin/env bash
# Snakemake's scheduler settings on a toy workflow of many short jobs, measured in one run:
# Snakemake's defaults, the profile's 60 s re-poll with and without daemon timers
# (benchcast.workflow.support.exit_without_idle_tail), and the ILP vs greedy job selector.
# Wall time shows the idle tail; user+sys CPU is mostly Snakemake's own scheduling.
# Usage: bash scripts/performance/benchmark_scheduler.sh [n_jobs=600] [cores=2]
set -euo pipefail
n_jobs=${1:-600}
cores=${2:-2}
src="$(cd "$(dirname "$0")/../.." && pwd)/src"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
write_snakefile() {  # $1: patch (1/0)
  {
    echo "import sys; sys.path.insert(0, '$src')"
    if [ "$1" = 1 ]; then
      echo "from benchcast.workflow.support import exit_without_idle_tail; exit_without_idle_tail()"
    fi
    cat <<SMK
rule all:
    input: expand("out/{i}.txt", i=range($n_jobs))
rule job:
    output: "out/{i}.txt"
    shell: "sleep 0.15; echo {wildcards.i} > {output}"
SMK
  } > "$work/Snakefile"
}
printf "%-34s %8s %8s %8s\n" "setting" "wall_s" "user_s" "sys_s"
for variant in "100/1s ilp 0 (Snakemake defaults)" "1000/60s ilp 0" "1000/60s ilp 1" "1000/60s greedy 1 (profiles/default)"; do
  read -r span sched patch _ <<<"$variant"
  write_snakefile "$patch"
  rm -rf "$work/out" "$work/.snakemake"
  /usr/bin/time -f "%e %U %S" -o "$work/time" snakemake -s "$work/Snakefile" -d "$work" --cores "$cores" --quiet \
    --max-jobs-per-timespan "$span" --scheduler "$sched" > /dev/null 2>&1
  read -r wall user sys < "$work/time"
  printf "%-34s %8s %8s %8s\n" "$span $sched daemon_timers=$patch" "$wall" "$user" "$sys"
done

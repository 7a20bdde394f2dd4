#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine, for testing the workflow's SLURM path
# (tests/workflow/test_slurm_e2e.py) and for trying the profile before a real cluster.
#
#   bash scripts/slurm/local-cluster.sh up      # install (apt) if needed, configure, start, wait for an idle node
#   bash scripts/slurm/local-cluster.sh status  # sinfo, or "down"
#   bash scripts/slurm/local-cluster.sh down    # stop the daemons this script started, by their pids
#
# Needs root and Debian's packages (slurm-wlm 22.05, munge); there is no systemd here, so the
# daemons are started by hand. Everything the cluster writes lives in $BENCHCAST_SLURM_DIR
# (default /tmp/benchcast-slurm): slurm.conf, pid files, logs, spool and state. Client commands
# (sbatch, squeue, ...) find the configuration through /etc/slurm/slurm.conf, which `up` links to
# ours when no other configuration is there (and `down` unlinks); otherwise export SLURM_CONF.
#
# No accounting daemon: `sacct` would hang, so job status comes from squeue (the profile's
# slurm-status-command) and finished jobs stay visible to it for MinJobAge seconds.
set -euo pipefail

STATE=${BENCHCAST_SLURM_DIR:-/tmp/benchcast-slurm}
CONF=$STATE/slurm.conf
ETC_CONF=/etc/slurm/slurm.conf
MARKER="# written by benchcast scripts/slurm/local-cluster.sh"
WAIT_SECONDS=${BENCHCAST_SLURM_WAIT:-60}

die() { echo "local-cluster: $*" >&2; exit 1; }

install_packages() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
        && command -v sbatch >/dev/null && return
    [ "$(id -u)" = 0 ] || die "slurm-wlm and munge are not installed and this is not root; install them: apt-get install slurm-wlm munge"
    command -v apt-get >/dev/null || die "no apt-get: install SLURM (slurmctld, slurmd, sbatch) and munge by hand"
    echo "local-cluster: installing slurm-wlm and munge (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null \
        || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null; } \
        || die "apt-get install slurm-wlm munge failed"
}

write_config() {
    local node host
    host=$(hostname -s)
    # slurmd -C reports this host's real CPUs/sockets/cores/memory as a NodeName line
    node=$(slurmd -C | head -1)
    [[ $node == NodeName=* ]] || die "slurmd -C did not print a NodeName line: $node"
    mkdir -p "$STATE/ctld" "$STATE/spool" "$STATE/log" "$STATE/munge"
    cat >"$CONF" <<EOF
$MARKER
ClusterName=benchcast
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge/munge.socket
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
# bind a job to its CPUs (as cgroups do): Snakemake inside a job counts them as --cores all
TaskPlugin=task/affinity
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
$node State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    if [ -e "$ETC_CONF" ] && ! grep -qF "$MARKER" "$ETC_CONF"; then
        echo "local-cluster: $ETC_CONF is not ours; client commands need: export SLURM_CONF=$CONF"
    else
        mkdir -p "$(dirname "$ETC_CONF")"
        ln -sfn "$CONF" "$ETC_CONF"
    fi
}

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

up() {
    install_packages
    if running "$STATE/slurmctld.pid"; then
        echo "local-cluster: already up (state in $STATE)"
    else
        write_config
        # the key the munge package made; munged refuses a key readable by others
        [ -s /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing: run mungekey (or reinstall munge)"
        running "$STATE/munged.pid" || munged --force --socket="$STATE/munge/munge.socket" \
            --pid-file="$STATE/munged.pid" --log-file="$STATE/log/munged.log" --seed-file="$STATE/munge/munge.seed"
        SLURM_CONF=$CONF slurmctld -f "$CONF" -i
        SLURM_CONF=$CONF slurmd -f "$CONF"
    fi
    local waited=0
    export SLURM_CONF=$CONF
    until sinfo -h -o "%T" 2>/dev/null | grep -qx "idle"; do
        if [ "$waited" -ge "$WAIT_SECONDS" ]; then
            sinfo 2>&1 || true
            tail -5 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" 2>/dev/null || true
            die "the node did not become idle within ${WAIT_SECONDS}s (logs in $STATE/log)"
        fi
        sleep 1
        waited=$((waited + 1))
    done
    sinfo
    echo "local-cluster: up (config $CONF)"
}

stop_pid() {
    local file=$1 pid
    [ -s "$file" ] || return 0
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid"
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$file"
}

down() {
    # jobs still queued or running would outlive their controller: cancel them first
    if running "$STATE/slurmctld.pid"; then
        SLURM_CONF=$CONF scancel --full --quiet --user "$(id -un)" 2>/dev/null || true
    fi
    stop_pid "$STATE/slurmd.pid"
    stop_pid "$STATE/slurmctld.pid"
    stop_pid "$STATE/munged.pid"
    if [ -L "$ETC_CONF" ] && [ "$(readlink "$ETC_CONF")" = "$CONF" ]; then rm -f "$ETC_CONF"; fi
    echo "local-cluster: down"
}

status() {
    if running "$STATE/slurmctld.pid"; then SLURM_CONF=$CONF sinfo; else echo "down"; fi
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    status) status ;;
    *) die "usage: $0 up|down|status" ;;
esac

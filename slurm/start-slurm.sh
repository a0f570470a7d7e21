#!/usr/bin/env bash
# Starts a real single-node Slurm on this machine for tests and CI: munged, slurmctld
# and slurmd, one node named after `hostname -s` that advertises FK_SLURM_CPUS CPUs
# (default 8: tests run 4-rank jobs side by side on 2-core machines; the node's real
# core count is overridden with SlurmdParameters=config_overrides).
#
# Installs nothing (scripts/install-deps.sh installs slurm-wlm, munge and libpmix-dev).
# Runs as root. Idempotent: when the daemons already run with this configuration it
# only waits for the node to be idle. slurm/stop-slurm.sh stops everything it started.
#
# Partitions: `debug` (default, up) and `down` (State=DOWN: jobs sent there pend with
# reason PartitionDown forever — the tests use it for a pending reason that never clears).
# No accounting database: sacct reports that accounting is disabled, so the Slurm
# executor's sacct-less path (exit code files) is what runs here.
#
# Environment: FK_SLURM_DIR (state, spool, logs, config; default /var/lib/fk-slurm),
# FK_SLURM_CPUS (default 8), FK_SLURM_WAIT (seconds to wait for the node, default 60).
set -euo pipefail

dir=${FK_SLURM_DIR:-/var/lib/fk-slurm}
cpus=${FK_SLURM_CPUS:-8}
wait_s=${FK_SLURM_WAIT:-60}
node=$(hostname -s)
conf=/etc/slurm/slurm.conf
marker="# fk-slurm: written by slurm/start-slurm.sh"

say() { echo "start-slurm: $*"; }
die() { echo "start-slurm: error: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it starts munged, slurmctld and slurmd)"
for tool in munged slurmctld slurmd sinfo scontrol; do
  command -v "$tool" > /dev/null || die "$tool not found: run scripts/install-deps.sh (packages slurm-wlm munge)"
done
if [ -e "$conf" ] && ! grep -qF "$marker" "$conf"; then
  die "$conf exists and was not written by this script: this machine has a Slurm of its own; not touching it"
fi

mkdir -p "$dir"/{state,spool,log,run}
chmod 755 "$dir"

# --- munge -----------------------------------------------------------------------
munge_running() { [ -S /run/munge/munge.socket.2 ] && munge -n 2> /dev/null | unmunge > /dev/null 2>&1; }
if munge_running; then
  say "munged already running"
else
  id munge > /dev/null 2>&1 || die "no munge user: is the munge package installed?"
  mkdir -p /run/munge /etc/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /etc/munge /var/log/munge /var/lib/munge
  chmod 755 /run/munge
  chmod 700 /etc/munge /var/log/munge /var/lib/munge
  if [ ! -s /etc/munge/munge.key ]; then
    say "creating /etc/munge/munge.key"
    if command -v mungekey > /dev/null; then
      runuser -u munge -- mungekey --create --keyfile=/etc/munge/munge.key
    else
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    fi
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
  rm -f /run/munge/munge.socket.2 /run/munge/munged.pid
  runuser -u munge -- munged
  for _ in $(seq 50); do munge_running && break; sleep 0.1; done
  munge_running || die "munged did not start (see /var/log/munge/munged.log)"
  say "munged started"
fi

# --- slurm.conf --------------------------------------------------------------------
new_conf=$(cat <<EOF
$marker
# Single-node test cluster. State, spool and logs under $dir.
ClusterName=fk
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=300
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=20
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
PartitionName=down Nodes=$node Default=NO MaxTime=INFINITE State=DOWN
EOF
)

pid_alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2> /dev/null; }
daemons_running() { pid_alive "$dir/run/slurmctld.pid" && pid_alive "$dir/run/slurmd.pid"; }

if daemons_running && [ -e "$conf" ] && [ "$(cat "$conf")" = "$new_conf" ]; then
  say "slurmctld and slurmd already running"
else
  if daemons_running || pid_alive "$dir/run/slurmctld.pid" || pid_alive "$dir/run/slurmd.pid"; then
    say "configuration changed or a daemon is missing: restarting"
    "$(dirname "$0")/stop-slurm.sh" --keep-munge
  fi
  mkdir -p /etc/slurm
  printf '%s\n' "$new_conf" > "$conf"
  # A fresh controller state each start: no jobs left over from an earlier run.
  rm -rf "${dir:?}"/state/* "${dir:?}"/spool/*
  # Job ids start from 1 again, and a PMIx client directory that a killed step of an
  # earlier cluster left behind (/tmp/spmix_appdir_<uid>_<job>.<step>) makes the step of
  # the job that reuses its id fail to launch. No step runs now: they all go.
  rm -rf /tmp/spmix_appdir_*
  slurmctld -i || die "slurmctld did not start (see $dir/log/slurmctld.log)"
  for _ in $(seq 100); do scontrol ping 2> /dev/null | grep -q "is UP" && break; sleep 0.1; done
  slurmd -N "$node" || die "slurmd did not start (see $dir/log/slurmd.log)"
  say "slurmctld and slurmd started (config $conf, logs in $dir/log)"
fi

# --- wait for the node ---------------------------------------------------------------
deadline=$(( $(date +%s) + wait_s ))
while :; do
  state=$(sinfo --noheader --partition=debug --node="$node" --format=%T 2> /dev/null | head -n1 || true)
  case "$state" in
    idle | mixed | allocated) break ;;
    down* | drain* | fail*)
      scontrol update NodeName="$node" State=RESUME > /dev/null 2>&1 || true ;;
  esac
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "start-slurm: error: node $node is '${state:-unknown}' after ${wait_s} s; last log lines:" >&2
    tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
    exit 1
  fi
  sleep 0.5
done
say "node $node is $state ($cpus CPUs, partition debug)"

#!/usr/bin/env bash
# Stops the single-node Slurm that slurm/start-slurm.sh started: cancels its jobs,
# stops slurmd, slurmctld and (unless --keep-munge) munged, and removes the slurm.conf
# it wrote. Safe to run when nothing runs. Only processes named in the pid files
# under FK_SLURM_DIR (and munged's own pid file) are stopped.
set -euo pipefail

dir=${FK_SLURM_DIR:-/var/lib/fk-slurm}
conf=/etc/slurm/slurm.conf
marker="# fk-slurm: written by slurm/start-slurm.sh"
keep_munge=0
[ "${1:-}" = "--keep-munge" ] && keep_munge=1

say() { echo "stop-slurm: $*"; }
[ "$(id -u)" -eq 0 ] || { echo "stop-slurm: error: run as root" >&2; exit 1; }

ours=0
[ -e "$conf" ] && grep -qF "$marker" "$conf" && ours=1

# Stops the process in pid file $1 (named $2): SIGTERM, then SIGKILL after 10 s.
stop_pid() {
  local file=$1 name=$2 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2> /dev/null; then
    kill -TERM "$pid" 2> /dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2> /dev/null; then
      say "$name (pid $pid) ignored SIGTERM: SIGKILL"
      kill -KILL "$pid" 2> /dev/null || true
    fi
    say "stopped $name (pid $pid)"
  fi
  rm -f "$file"
}

if [ "$ours" -eq 1 ] && [ -s "$dir/run/slurmctld.pid" ] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2> /dev/null; then
  scancel --full --quiet --user=root > /dev/null 2>&1 || true
fi
stop_pid "$dir/run/slurmd.pid" slurmd
# Job steps (slurmstepd) of cancelled jobs end with slurmd; give them a moment.
for _ in $(seq 50); do pgrep -x slurmstepd > /dev/null || break; sleep 0.1; done
stop_pid "$dir/run/slurmctld.pid" slurmctld
if [ "$keep_munge" -eq 0 ]; then
  stop_pid /run/munge/munged.pid munged
  rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
fi
if [ "$ours" -eq 1 ] && [ "$keep_munge" -eq 0 ]; then
  rm -f "$conf"
fi
say "done"

#!/usr/bin/env bash
# Stops what slurm_up.sh DIR started (slurmd, slurmctld, then munged), by the
# pids in DIR's pid files only: TERM, then KILL after 10 s.
set -u
DIR=${1:?usage: slurm_down.sh DIR}
pids=()
term() {
  local pid
  [ -f "$1" ] || return 0
  pid=$(cat "$1" 2>/dev/null)
  rm -f "$1"
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
}
wait_gone() {
  local pid
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null; done
  pids=()
}
term "$DIR/slurmd.pid"
term "$DIR/slurmctld.pid"
wait_gone
term "$DIR/munged.pid"   # last: the Slurm daemons authenticate through it
wait_gone
exit 0

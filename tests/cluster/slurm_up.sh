#!/usr/bin/env bash
# Starts a throw-away single-node Slurm on this machine for the sweep tests:
# munged, slurmctld and slurmd, each with its own socket, ports, state and
# logs under DIR, so nothing system-wide is touched or needed (no systemd).
#   slurm_up.sh DIR     -> DIR/slurm.conf, DIR/env (export SLURM_CONF=...)
# Exit 0 once the node is idle; otherwise prints why and the logs, stops
# what it started and exits 1. Stop with slurm_down.sh DIR.
set -u
DIR=${1:?usage: slurm_up.sh DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
TIMEOUT=${SLURM_UP_TIMEOUT:-30}

fail() {
  echo "slurm_up: $*" >&2
  for f in "$DIR"/munged.log "$DIR"/slurmctld.log "$DIR"/slurmd.log; do
    [ -f "$f" ] && { echo "---- $f (last 20 lines)" >&2; tail -n 20 "$f" >&2; }
  done
  "$HERE/slurm_down.sh" "$DIR" >/dev/null 2>&1
  exit 1
}

for tool in munged slurmctld slurmd sbatch sinfo scontrol; do
  command -v "$tool" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
  command -v "$tool" >/dev/null 2>&1 ||
    fail "'$tool' not found: apt-get install -y slurm-wlm munge"
done

# Two free TCP ports on localhost (connecting fails = nobody listens).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() {
  local p=$1
  while ! port_free "$p" || [ "$p" = "${2:-}" ]; do p=$((p + 1)); done
  echo "$p"
}
BASE=$((20000 + ($$ % 20000)))
CTLD_PORT=$(pick_port "$BASE")
SLURMD_PORT=$(pick_port $((CTLD_PORT + 1)) "$CTLD_PORT")

# munge: a fresh key and a private socket (the socket directory must not be
# writable by others, or munged refuses it).
mkdir -p -m 0700 "$DIR/munge" "$DIR/state" "$DIR/spool"
chmod 0700 "$DIR/munge"
if command -v mungekey >/dev/null 2>&1; then
  mungekey --create --keyfile="$DIR/munge/munge.key" --force 2>/dev/null ||
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
else
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 0400 "$DIR/munge/munge.key"
SOCKET="$DIR/munge/munge.socket"
munged --force --socket="$SOCKET" --key-file="$DIR/munge/munge.key" \
  --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" \
  --seed-file="$DIR/munge/munge.seed" >>"$DIR/munged.log" 2>&1 ||
  fail "munged did not start"

# munged daemonizes once its socket is ready.
[ -S "$SOCKET" ] || fail "munged socket $SOCKET missing"

cat >"$DIR/slurm.conf" <<CONF
# Written by tests/cluster/slurm_up.sh: a single-node test cluster.
ClusterName=nvmesimtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
# Schedule array tasks as soon as earlier ones end (default: a 3 s delay).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
echo "export SLURM_CONF=$DIR/slurm.conf" >"$DIR/env"
export SLURM_CONF="$DIR/slurm.conf"

# -c: clear saved state from any previous run in DIR.
slurmctld -c -f "$SLURM_CONF" >>"$DIR/slurmctld.log" 2>&1 || fail "slurmctld did not start"
slurmd -c -N localhost -f "$SLURM_CONF" >>"$DIR/slurmd.log" 2>&1 || fail "slurmd did not start"

deadline=$((SECONDS + TIMEOUT))
while :; do
  state=$(sinfo -h -n localhost -o %t 2>/dev/null)
  case "$state" in idle*) break ;; esac
  [ $SECONDS -ge $deadline ] && fail "node not idle after ${TIMEOUT}s (state '${state:-no answer}')"
  sleep 0.2
done
echo "slurm_up: ready in $DIR (ports $CTLD_PORT, $SLURMD_PORT)"

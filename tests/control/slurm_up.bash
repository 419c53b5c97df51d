# slurm_up.bash — sourced by tests/control/run_slurm.sh and bench/fault-soak/own-slurm.sh: a Slurm of
# its own on this machine (CLUSTER-TESTING.md, "Slurm"): its own munged (own socket), slurmctld and
# two slurmd (n1, n2, one CPU each, both on 127.0.0.1) from a temporary slurm.conf, every path in
# a directory the caller gives. Needs root and Debian's slurmctld, slurmd, slurm-client, munge.
#   slurm_missing            the first Slurm or munge program not installed ("" when all are)
#   slurm_up DIR             starts them with their state in DIR and exports SLURM_CONF; returns
#                            non-zero, with the logs on stderr, when the nodes are not idle in 10 s
#   slurm_down DIR           cancels every job of that Slurm (all are the caller's: nobody else
#                            knows its port) and stops its daemons, SIGKILL after 3 s
slurm_missing() {
  local t
  for t in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged salloc srun squeue scancel scontrol sinfo; do
    command -v "$t" > /dev/null || { echo "$t"; return; }
  done
}
slurm_up() {
  local d=$1 base
  mkdir -p "$d/munge" "$d/state" "$d/spool"
  chmod 755 "$d"
  chown munge:munge "$d/munge"
  runuser -u munge -- /usr/sbin/munged --socket="$d/munge/sock" --pid-file="$d/munge/munged.pid" \
    --log-file="$d/munge/log" --seed-file="$d/munge/seed"
  base=$((17100 + $$ % 800 * 3)) # two Slurms on one machine (two callers at once) take other ports
  cat > "$d/slurm.conf" << CONF
ClusterName=pit
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/ctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/ctld.log
SlurmdLogFile=$d/slurmd-%n.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
NodeName=n1 NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=1 Port=$((base + 1))
NodeName=n2 NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=1 Port=$((base + 2))
PartitionName=node Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$d/slurm.conf
  /usr/sbin/slurmctld -i
  /usr/sbin/slurmd -N n1
  /usr/sbin/slurmd -N n2
  for _ in $(seq 100); do
    [ "$(sinfo -h -o '%t' 2> /dev/null | sort -u)" = "idle" ] && return 0
    sleep 0.1
  done
  sinfo >&2
  cat "$d"/*.log >&2
  return 1
}
slurm_down() {
  local d=$1 f p ps=()
  [ -f "$d/slurm.conf" ] && SLURM_CONF=$d/slurm.conf squeue -h -o '%i' 2> /dev/null | xargs -r scancel 2> /dev/null || true
  for f in "$d"/ctld.pid "$d"/slurmd-n1.pid "$d"/slurmd-n2.pid "$d"/munge/munged.pid; do
    [ -f "$f" ] && ps+=("$(cat "$f")")
  done
  for p in "${ps[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${ps[@]}"; do
    for _ in $(seq 30); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$p" 2> /dev/null || true
  done
}

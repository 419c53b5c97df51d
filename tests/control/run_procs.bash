# run_procs.bash — sourced by the controller-crash parts of tests/control/run_ssh.sh and
# run_slurm.sh: the provider's view of a run's processes, from /proc.
# run_procs RUN [PID...]: "GEN COMM" of each process (of the PIDs given, else of all) tagged
# PITSTOP_RUN=RUN in its environment (what every launcher sets for the workload's processes),
# GEN its PITSTOP_GEN.
run_procs() {
  local run=$1 f files=()
  shift
  if (($#)); then files=("${@/#//proc/}"); else files=(/proc/[0-9]*); fi
  for f in $(grep -lzx "PITSTOP_RUN=$run" "${files[@]/%//environ}" 2> /dev/null); do
    f=${f%/environ}
    echo "$({ tr '\0' '\n' < "$f/environ" | sed -n 's/^PITSTOP_GEN=//p'; } 2> /dev/null) $(cat "$f/comm" 2> /dev/null)"
  done
}
# summary: lines on stdin counted, on one line ("2 0 pitstop 1 0 mpirun" …)
summary() { sort | uniq -c | xargs; }

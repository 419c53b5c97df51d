# common.bash — sourced by tests/dist/*.sh and bench scripts: the MPI
# environment this machine needs (root, loopback only, no CMA single copy).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_oob_tcp_if_include=${OMPI_MCA_oob_tcp_if_include:-lo}
export OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-lo}
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
# sanitizer builds: Open MPI's own allocations are not ours to report
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
MPIRUN=(mpirun --oversubscribe --mca btl_vader_single_copy_mechanism none)

# pitstop_train_built: true when `$PITSTOP train` exists in this build.
pitstop_train_built() {
  local help
  [[ -x "$PITSTOP" ]] || return 1
  help=$("$PITSTOP" train --help 2>&1 || true)
  [[ "$help" != *"not part of this build"* && "$help" != *"unknown command"* ]]
}

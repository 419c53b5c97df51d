/* control_impl.h — private to src/control/: provider implementations and the
 * controller's process helpers. */
#ifndef PIT_CONTROL_IMPL_H
#define PIT_CONTROL_IMPL_H

#include <sys/types.h>

#include "pitstop/control.h"

extern const struct pit_provider_ops pit_provider_local;

/* Reads a whole small file into buf (NUL-terminated); -1 if it cannot. */
int ctl_read_small(const char *path, char *buf, size_t n);
/* Sends sig to every process of process group pgid that catches sig (its
 * SigCgt bit is set in /proc/PID/status); returns how many were signalled.
 * A launcher (mpirun) forwards; a torchrun agent, which would die of
 * SIGUSR1, is skipped while its workers, which catch it, get it. */
int ctl_signal_catchers(pid_t pgid, int sig);
/* Kills every process whose pid is listed in file (a cgroup.procs): TERM,
 * up to grace_s, then KILL. Returns the number still alive (0 on success). */
int ctl_kill_listed(const char *procs_file, double grace_s);

/* What the controller has seen of the workload, for the cost and time
 * policies (observe.c): this generation's step times and per-rank
 * compute/wait, the PIT time of every membership measured in the job.
 * steps is owned (ctl_obs_release). */
#define CTL_OBS_SKIP 5    /* leading iterations of a generation left out of the split */
#define CTL_OBS_EVERY 10  /* steadiness checked every this many iterations */
struct ctl_obs {
  double *steps;
  size_t n, cap;
  double csum[PIT_POLICY_NODES_MAX], wsum[PIT_POLICY_NODES_MAX];
  int nranks, nsplit;
  int64_t batch;
  int steady;
  double precision;       /* P of pit_steady_check (0.03) */
  int64_t cap_iters;      /* steady anyway after this many (200: the interval says how well) */
  int nmeas;
  struct pit_policy_meas meas[PIT_POLICY_MEAS_MAX];
};
void ctl_obs_init(struct ctl_obs *o);
void ctl_obs_release(struct ctl_obs *o);
/* A generation starts on cur: the series and the split start again. */
void ctl_obs_gen(struct ctl_obs *o);
/* One iteration record of a generation on membership cur. */
int ctl_obs_iter(struct ctl_obs *o, const struct pit_membership *cur, const struct pit_record *r,
                 struct pit_err *e);
/* Fills s's steady, batch, meas and nodes (nodes[i] holds ranks
 * [i·slots, (i+1)·slots), as the launchers place them). */
void ctl_obs_state(const struct ctl_obs *o, const struct pit_node *nodes, int nnodes, int slots,
                   struct pit_policy_state *s);

#endif

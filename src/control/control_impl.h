/* control_impl.h — private to src/control/: provider implementations and the
 * controller's process helpers. */
#ifndef PIT_CONTROL_IMPL_H
#define PIT_CONTROL_IMPL_H

#include <sys/types.h>

#include "pitstop/control.h"
#include "pitstop/sim.h"

extern const struct pit_provider_ops pit_provider_local;
extern const struct pit_provider_ops pit_provider_ssh;
extern const struct pit_provider_ops pit_provider_slurm;
extern const struct pit_provider_ops pit_provider_command;

/* One way to declare a provider: the operations every provider has, named
 * <prefix>_open, _start, _stop, _list, _health, _wrap, _close in its file.
 * The optional ones (mpi_args, poll, clear, wrap_remote_shell) follow the macro in
 * the initializer:
 *   const struct pit_provider_ops pit_provider_x = {PIT_PROVIDER_OPS(x, "x", "help")};
 */
#define PIT_PROVIDER_OPS(prefix, name_, help_)                                                                 \
  .name = (name_), .help = (help_), .open = prefix##_open, .start = prefix##_start, .stop = prefix##_stop,     \
  .list = prefix##_list, .health = prefix##_health, .wrap = prefix##_wrap, .close = prefix##_close

/* A node the provider's own listing shows but no node file names (a crash
 * between starting it and writing its file): zeroed, named id, of type itype
 * ("?" when NULL or empty), lost (to be stopped), times unknown (provider.c). */
void ctl_node_orphan(struct pit_node *n, const char *id, const char *itype);

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
  double *pc;             /* (nsplit, nranks): each split step's per-rank compute, for paired ratios */
  size_t cappc;           /* doubles allocated at pc */
  int64_t batch;
  int steady;
  double precision;       /* P of pit_steady_check (0.10: the policy weighs the interval) */
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
/* Fills s's steady, batch, pace, meas and nodes (nodes[i] holds ranks
 * [i·slots, (i+1)·slots), as the launchers place them), with each node's
 * paired ratio: in every split step, the slowest other node's compute over
 * this node's (node compute: the mean of its ranks'), as a 95% upper bound
 * from the mean and spread of its logarithm over the steps (Student t). The
 * ratio pairs ranks within the same steps, so a pace that drifts for the
 * whole machine (load, frequency) cancels out of it. */
void ctl_obs_state(const struct ctl_obs *o, const struct pit_node *nodes, int nnodes, int slots,
                   struct pit_policy_state *s);

/* What `pitstop run` has seen of spot capacity (market.c): spans of
 * availability, from a spot node coming up to a reclaim notice or a failed
 * spot start (down), and back. Run seconds throughout. */
struct ctl_spot {
  int on;                 /* the spot layer chooses the market (--policy cost --deadline, spot prices, a
                             provider with a spot market) */
  int observed;           /* 0: nothing seen yet (availability 0.5, as the simulator's) */
  int up;                 /* spot capacity as last seen */
  double since;           /* when the current span began */
  double up_s, down_s;    /* completed spans' seconds */
  int nup;                /* completed up spans */
  double tried, retry_s;  /* down: spot is tried again retry_s after the last try (doubled per failure) */
};
void ctl_spot_init(struct ctl_spot *sp);
/* A spot node came up at t (starts an up span unless one runs). */
void ctl_spot_up(struct ctl_spot *sp, double t);
/* Spot went away at t (a reclaim notice, a failed spot start): tried again
 * after retry_s, doubled at each failure while it stays away. */
void ctl_spot_down(struct ctl_spot *sp, double t, double retry_s);
/* Spot can be had (or is worth a try) at t. */
int ctl_spot_avail(const struct ctl_spot *sp, double t);
/* The run's measurements as the spot policy's state: the job's compute is
 * total_steps × tp, done step × tp; deadline, restart overhead (measured in
 * this job) and decision spacing in seconds; prices of the whole membership
 * per hour on each market. */
struct ctl_spot_in {
  double t, deadline_s, tp, restart_s, tick_s, price_h, spot_price_h;
  int64_t step, total_steps;
  enum pit_spot_mode mode; /* what the job holds now (idle: no node) */
};
void ctl_spot_state(const struct ctl_spot *sp, const struct ctl_spot_in *in, struct pit_spot_state *s);
/* A decision's reason: the state's numbers in seconds and prices. */
void ctl_spot_reason(const struct pit_spot_state *s, enum pit_spot_mode to, char *buf, size_t n);

/* s quoted for a POSIX shell ('...', a ' as '\''): what ssh's remote shell
 * turns back into the one word s. -1 when it does not fit in n. */
int ctl_shell_quote(const char *s, char *out, size_t n);

/* Node files (node_files.c): STATE_DIR/nodes/ID.node, one line each. */
struct ctl_node_id {
  char id[PIT_NAME_MAX];
};
int ctl_node_file_write(const char *state_dir, const char *id, const char *text, struct pit_err *e);
/* -1 when the file cannot be read. */
int ctl_node_file_read(const char *state_dir, const char *id, char *buf, size_t n);
int ctl_node_file_remove(const char *state_dir, const char *id, struct pit_err *e);
/* The ids of every node file (malloc'd array, caller frees). */
int ctl_node_files(const char *state_dir, struct ctl_node_id **ids, int *n, struct pit_err *e);

/* Resume (resume.c): the checkpoint a generation continues from. */
#define CTL_RESUME_BAD_MAX 16
struct ctl_resume_in {
  const char *want;       /* the checkpoint the controller knows as newest ("" none) */
  int64_t want_step;      /* its step: no candidate above it is used */
  const char *state_dir;  /* held links held-<step>.ckpt */
  const char *ckpt_dir;   /* step files checkpoint-<step>.pit */
  const char *mirror;     /* --checkpoint-mirror, or NULL */
  const char *events;     /* the events file's checkpoint records (may be NULL) */
  int (*own)(const char *path, struct pit_err *e); /* judges pitstop's own format (NULL: not judged) */
  int here;               /* the workload's files are this machine's (local provider): a wanted file
                             missing here is gone; else a missing one is on a node, not judged */
};
struct ctl_ckpt_bad {
  char path[1100];
  char why[400];
};
struct ctl_resume {
  int64_t step;           /* the chosen checkpoint's step; -1 when none checks */
  char path[1100];        /* the chosen file; "" when none checks */
  int from_mirror;        /* it is the mirror's copy */
  int ncand;              /* distinct files judged */
  int nbad;               /* of them damaged (newest first), with the reason each */
  struct ctl_ckpt_bad bad[CTL_RESUME_BAD_MAX];
};
/* 0 when path is a checkpoint the workload can read (or of a format not
 * judged here); else the reason in e (PIT_ENOTFOUND, PIT_EIO, PIT_EFORMAT). */
int ctl_ckpt_check(const char *path, int (*own)(const char *path, struct pit_err *e), struct pit_err *e);
/* The newest candidate at most at in->want_step whose file checks (out->path
 * "" when none); the damaged ones tried before it in out->bad. */
int ctl_resume_pick(const struct ctl_resume_in *in, struct ctl_resume *out, struct pit_err *e);
/* "'PATH': why; 'PATH': why" of r's damaged files. */
void ctl_resume_bad_list(const struct ctl_resume *r, char *buf, size_t n);
/* Copies the checkpoint src of step to MIRROR/name atomically, then removes
 * the mirror's older copies but the newest one below step. */
int ctl_mirror_copy(const char *src, const char *name, const char *mirror, int64_t step, struct pit_err *e);

#endif

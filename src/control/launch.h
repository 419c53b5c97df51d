/* launch.h — private to src/control/: one generation's processes. */
#ifndef PIT_CONTROL_LAUNCH_H
#define PIT_CONTROL_LAUNCH_H

#include <sys/types.h>

#include "control/control_impl.h"

#define CTL_ARGV_MAX 1024
#define CTL_PROCS_MAX 64

struct ctl_argv {                 /* strings owned */
  char *v[CTL_ARGV_MAX];
  int n;
};

struct ctl_proc {
  struct pit_child ch;            /* leads its own process group; ch.out_fd: its stdout */
  pid_t pid;                      /* ch.pid while running; kept after reaping */
  int fd;                         /* its stdout (non-blocking), -1 once closed */
  int node;                       /* per-node: index into the generation's nodes; -1: all (mpirun) */
  int exited, status;             /* status: exit code, or 128 + signal */
  struct pit_follower out;        /* the lines of fd (borrowed: closed here, not by it) */
  int efd;                        /* its stderr (non-blocking), -1 once closed */
  struct pit_follower err;        /* the lines of efd (borrowed) */
  char label[PIT_NAME_MAX];       /* its node's id in the log ("mpirun" for the mpi launcher) */
  struct pit_provider *remote;    /* per-node under a remote shell (ssh): signals go through it */
  struct pit_node rnode;          /* the node it runs on, for remote */
  int worker_failed;              /* it said a worker of its failed (torchrun: said.h) */
  double t_worker_failed;         /* run seconds the controller first saw that; 0: not yet */
};

struct ctl_gen {
  struct ctl_proc proc[CTL_PROCS_MAX];
  int nproc;
  char log[1100];                 /* stdout and stderr of every process (the generation's log) */
  int logfd;                      /* log, open for appending while the generation runs; -1 */
  int port;                       /* per-node: its PITSTOP_MASTER_PORT (0: none) */
};

struct ctl_launch {
  const struct pit_run_opts *o;
  struct pit_provider *prov;
  const struct pit_node *nodes;   /* the generation's nodes, in rank order */
  int nnodes;
  int gen;
  const char *state_dir, *ckpt_dir;
  char resume[1024];              /* "" or the checkpoint to continue from */
};

int ctl_launch(const struct ctl_launch *L, struct ctl_gen *g, struct pit_err *e);
/* 1: a generation launched now may be shrunk in place (ctl_shrink.c): pitstop
 * train under mpirun, on a provider that sees its nodes' processes (busy), in
 * the real world. Its launch names the request file (PITSTOP_SHRINK=DIR/shrink)
 * and tells mpirun that a rank exiting without MPI_Finalize ends no job. */
int ctl_launch_shrinkable(const struct pit_run_opts *o, const struct pit_provider *p);
/* One line of p's output into the generation's log as "[NODE out] line" or
 * "[NODE err] line" (one write, so lines of several processes never mix). */
void ctl_proc_log(struct ctl_gen *g, const struct ctl_proc *p, const char *line, size_t n, int is_err);
/* Every complete line follower f (reading fd *fd) holds now, each to on_line (a
 * negative return stops the drain with it); final: the writer is gone, its
 * unfinished last line counts. *fd is closed and set to -1 once the stream has
 * ended. Returns 0 or the first error. */
typedef int (*ctl_line_fn)(void *ctx, const char *line, size_t n, struct pit_err *e);
int ctl_proc_drain(struct pit_follower *f, int *fd, int final, ctl_line_fn on_line, void *ctx, struct pit_err *e);
/* Every complete line p's stderr holds now into the log; final: p is gone,
 * its unfinished last line counts. The stderr is closed once it has ended. */
int ctl_proc_drain_err(struct ctl_gen *g, struct ctl_proc *p, int final, struct pit_err *e);
/* TERM to every process group, up to grace_s, then KILL; reaps. A remote
 * process's TERM goes to its host (ctl_proc_signal), and once its local client
 * is killed its host is cleared of the run's processes (the provider's clear:
 * TERM, KILL after 2 s), so no generation runs on a host beside the next. */
void ctl_gen_kill(struct ctl_gen *g, double grace_s);
/* sig to p's workload: its process group here (catchers_only: the top-most of
 * its processes that catch sig, ctl_signal_catchers), or for a remote p the
 * run's processes on its host (the provider's signal). Returns how many were
 * signalled: groups, or catchers. */
int ctl_proc_signal(struct ctl_proc *p, int sig, int catchers_only);
/* Reaps p if it exited; 1 when it has, 0 while it runs. */
int ctl_proc_poll(struct ctl_proc *p);
void ctl_gen_release(struct ctl_gen *g);

#endif

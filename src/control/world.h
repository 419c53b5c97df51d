/* world.h — private to src/control/: the controller's dealings with the outside,
 * as one seam (struct ctl_world) that the deterministic simulation (dst.c,
 * docs/dst.md) replaces. pit_run_opts.world NULL (every real run): today's real
 * world — the monotonic clock, poll(2) on the workload's pipes, its processes
 * (launch.c, procs.c), signals, the provider the run names — unchanged.
 *
 * Invariants:
 *  - the controller reads the clock only through now_t (ctl_impl.h), which asks
 *    the world when there is one;
 *  - every externally visible effect of the controller (a provider call, a file
 *    written, renamed or removed, a record written, a launch, a signal) is
 *    preceded by ctl_effect: 0 carry it out, CTL_EFFECT_DEAD the controller is
 *    dead (the effect is swallowed, nothing changes outside, the caller goes on
 *    as if it had been done: a dead controller's later acts must not matter),
 *    or a negative errno (ENOSPC: the write fails as the disk would make it);
 *  - the workload's output still reaches the controller through the pipes and
 *    pit_follower of struct ctl_proc: a world writes the lines its workload
 *    prints into a pipe, so the controller's reading path is the real one. */
#ifndef PIT_CONTROL_WORLD_H
#define PIT_CONTROL_WORLD_H

#include <sys/types.h>

#include "control/launch.h"

#define CTL_EFFECT_DEAD 1

struct ctl_world;
struct ctl_world_ops {
  /* Monotonic seconds. */
  double (*now)(struct ctl_world *w);
  /* Waits up to timeout_s for output of g's processes (the simulation: its clock
   * advances, its workload prints what is due into g's pipes). */
  void (*wait)(struct ctl_world *w, struct ctl_gen *g, double timeout_s);
  /* Starts a generation of the workload (L as ctl_launch gets it): fills g's
   * processes, each with its stdout pipe fd (efd -1 allowed). */
  int (*launch)(struct ctl_world *w, const struct ctl_launch *L, struct ctl_gen *g, struct pit_err *e);
  /* 1 when p has exited (p->exited, p->status set), 0 while it runs. */
  int (*poll)(struct ctl_world *w, struct ctl_proc *p);
  /* TERM to g's processes, up to grace_s, then KILL: every one has exited after. */
  void (*kill_gen)(struct ctl_world *w, struct ctl_gen *g, double grace_s);
  /* sig to the processes of group pgid that catch it: how many were signalled. */
  int (*signal_catchers)(struct ctl_world *w, pid_t pgid, int sig);
  /* kill(-pgid, sig): 0 when the group exists (sig 0 only asks). */
  int (*kill_group)(struct ctl_world *w, pid_t pgid, int sig);
  /* Before each externally visible effect named what: 0, CTL_EFFECT_DEAD, or -errno. */
  int (*effect)(struct ctl_world *w, const char *what);
};

struct ctl_world {
  const struct ctl_world_ops *ops;
  const struct pit_provider_ops *provider; /* replaces the provider the run names (NULL: that one) */
  int broken_held;                         /* test only (tests/control/test_dst.c): the held-record rule
                                              dropped, iteration records out before a checkpoint covers
                                              them, to show the simulation catches a broken invariant */
  void *impl;
};

/* The seam's calls (ctl_world.c): w NULL is the real world. */
int ctl_effect(struct ctl_world *w, const char *what);
int ctl_w_launch(struct ctl_world *w, const struct ctl_launch *L, struct ctl_gen *g, struct pit_err *e);
int ctl_w_poll(struct ctl_world *w, struct ctl_proc *p);
void ctl_w_kill_gen(struct ctl_world *w, struct ctl_gen *g, double grace_s);
/* sig to p's workload (ctl_proc_signal): how many were signalled. */
int ctl_w_signal_proc(struct ctl_world *w, struct ctl_proc *p, int sig, int catchers_only);
int ctl_w_kill_group(struct ctl_world *w, pid_t pgid, int sig);

#endif

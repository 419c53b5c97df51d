/* stop.h — private to src/control/: the user's stop of a run (stop.c). */
#ifndef PIT_CONTROL_STOP_H
#define PIT_CONTROL_STOP_H

#include <stddef.h>

#include "pitstop/control.h"

struct ctl_gen;

enum ctl_stop_how {
  CTL_STOP_NONE,   /* no signal seen */
  CTL_STOP_AGREED, /* the workload checkpoints at an agreed step (SIGUSR1, or a resize's request) */
  CTL_STOP_TERM,   /* SIGTERM to every process group, SIGKILL after the grace */
  CTL_STOP_KILLED  /* SIGKILL sent: a second signal, or the grace ended */
};

struct ctl_stop {
  enum ctl_stop_how how;
  int sig;         /* the first signal (SIGINT, SIGTERM; CTL_STOP_MEASURED); 0: none */
  int seen;        /* the stop's count when it was first seen */
  double t_signal; /* run seconds it was first seen */
};

/* A stop that is no signal: the run measured what it was asked to
 * (pit_run_opts.until_steady/until_iters, `pitstop profile -- CMD`). */
#define CTL_STOP_MEASURED (-1)

void ctl_stop_init(struct ctl_stop *s);
/* The signal the run was asked to stop with (0: none; CTL_STOP_MEASURED). st NULL: none. */
int ctl_stop_signal(const struct pit_run_stop *st);
const char *ctl_stop_signame(int sig);
/* One step of the stop at run seconds t (see stop.c): g the running
 * generation (NULL: none running); can_agree: the workload speaks the
 * protocol and has started iterating; asked_already: a resize's stop request
 * is under way. 1 with msg set when something was done (for a warning). */
int ctl_stop_step(struct ctl_stop *s, const struct pit_run_stop *st, double grace_s, struct ctl_gen *g, double t,
                  int can_agree, int asked_already, char *msg, size_t n);

#endif

/* ctl_world.c — the controller's seam to the outside (world.h): each call goes to
 * the world pit_run was given, or, without one, to the real thing (processes,
 * signals, the clock) exactly as before the seam existed.
 * Invariant: with w NULL every function is the real call, nothing more. */
#define _GNU_SOURCE
#include <signal.h>

#include "control/world.h"

int ctl_effect(struct ctl_world *w, const char *what) {
  return w && w->ops->effect ? w->ops->effect(w, what) : 0;
}

int ctl_w_launch(struct ctl_world *w, const struct ctl_launch *L, struct ctl_gen *g, struct pit_err *e) {
  return w ? w->ops->launch(w, L, g, e) : ctl_launch(L, g, e);
}

int ctl_w_poll(struct ctl_world *w, struct ctl_proc *p) {
  return w ? w->ops->poll(w, p) : ctl_proc_poll(p);
}

void ctl_w_kill_gen(struct ctl_world *w, struct ctl_gen *g, double grace_s) {
  if (w)
    w->ops->kill_gen(w, g, grace_s);
  else
    ctl_gen_kill(g, grace_s);
}

int ctl_w_signal_proc(struct ctl_world *w, struct ctl_proc *p, int sig, int catchers_only) {
  if (!w)
    return ctl_proc_signal(p, sig, catchers_only);
  return catchers_only ? w->ops->signal_catchers(w, p->pid, sig) : w->ops->kill_group(w, p->pid, sig) == 0;
}

int ctl_w_kill_group(struct ctl_world *w, pid_t pgid, int sig) {
  return w ? w->ops->kill_group(w, pgid, sig) : kill(-pgid, sig);
}

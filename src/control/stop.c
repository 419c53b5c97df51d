/* stop.c — the user's stop of a run (Ctrl-C, SIGTERM to `pitstop run`):
 * how the generation's processes are asked to stop, and when they are made to.
 *
 * The CLI's signal handler only counts signals into a struct pit_run_stop;
 * the controller's loop calls ctl_stop_step, which moves one state machine:
 *
 *   none ──signal──▶ agreed (a protocol workload past its first iteration:
 *                    SIGUSR1 to the processes that catch it, as a resize
 *                    asks, so it checkpoints at a step all ranks agree on)
 *        └────────▶ term (anything else: SIGTERM to every process group)
 *   agreed|term ──grace_s passed, or a second signal──▶ killed (SIGKILL to
 *                    every process group, at once)
 *
 * The same machine stops a run that measured what it was asked to
 * (CTL_STOP_MEASURED: `pitstop profile -- CMD`), its source the controller's.
 * A stop that finds a resize already under way waits for the resize's
 * checkpoint (the workload was asked already) and counts its grace from the
 * signal. Invariants: ctl_stop_step only signals the generation's own process
 * groups (and their catchers); it never blocks longer than a kill's reaping;
 * once killed, nothing of the generation runs when it returns. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "control/launch.h"
#include "control/stop.h"

void ctl_stop_init(struct ctl_stop *s) {
  memset(s, 0, sizeof *s);
  s->how = CTL_STOP_NONE;
}

int ctl_stop_signal(const struct pit_run_stop *st) { return st ? (int)st->sig : 0; }

const char *ctl_stop_signame(int sig) {
  return sig == SIGINT             ? "SIGINT"
         : sig == SIGTERM          ? "SIGTERM"
         : sig == SIGHUP           ? "SIGHUP"
         : sig == CTL_STOP_MEASURED ? "measured"
                                   : "a signal";
}

static int signal_groups(struct ctl_gen *g, int sig) {
  int n = 0;
  for (int i = 0; i < g->nproc; i++)
    if (!g->proc[i].exited)
      n += ctl_proc_signal(&g->proc[i], sig, 0);
  return n;
}

int ctl_stop_step(struct ctl_stop *s, const struct pit_run_stop *st, double grace_s, struct ctl_gen *g, double t,
                  int can_agree, int asked_already, char *msg, size_t n) {
  msg[0] = 0;
  if (!st || st->sig == 0)
    return 0;
  double grace = grace_s > 0 ? grace_s : 0;
  int count = (int)st->count;
  if (s->how == CTL_STOP_NONE) {
    s->sig = (int)st->sig;
    s->t_signal = t;
    s->seen = count;
    const char *name = ctl_stop_signame(s->sig);
    int k = 0;
    if (asked_already) {
      s->how = CTL_STOP_AGREED;
      snprintf(msg, n, "%s: the checkpoint under way is finished, then the run stops (killed after --grace %.0f s)",
               name, grace);
    } else if (can_agree && g) {
      for (int i = 0; i < g->nproc; i++)
        if (!g->proc[i].exited)
          k += ctl_proc_signal(&g->proc[i], SIGUSR1, 1);
    }
    if (s->how == CTL_STOP_NONE && k > 0) {
      s->how = CTL_STOP_AGREED;
      snprintf(msg, n,
               "%s: the workload checkpoints at a step its ranks agree on, then the run stops (killed after "
               "--grace %.0f s; a second Ctrl-C kills at once)",
               name, grace);
    } else if (s->how == CTL_STOP_NONE && (!g || g->nproc == 0)) {
      s->how = CTL_STOP_KILLED;
      snprintf(msg, n, "%s: the run stops (no workload running)", name);
    } else if (s->how == CTL_STOP_NONE) {
      s->how = CTL_STOP_TERM;
      k = g ? signal_groups(g, SIGTERM) : 0;
      snprintf(msg, n,
               "%s: SIGTERM to the workload (%d process group%s), SIGKILL after --grace %.0f s (a second Ctrl-C "
               "kills at once)",
               name, k, k == 1 ? "" : "s", grace);
    }
    return 1;
  }
  if (s->how == CTL_STOP_KILLED)
    return 0;
  const char *why = NULL;
  if (count > s->seen)
    why = "a second signal";
  else if (t - s->t_signal > grace)
    why = "the grace period ended";
  if (!why)
    return 0;
  s->how = CTL_STOP_KILLED;
  int k = g ? signal_groups(g, SIGKILL) : 0;
  if (g)
    ctl_gen_kill(g, 0);
  snprintf(msg, n, "%s: the workload killed at once (SIGKILL to %d process group%s, %.1f s after %s)", why, k,
           k == 1 ? "" : "s", t - s->t_signal, ctl_stop_signame(s->sig));
  return 1;
}

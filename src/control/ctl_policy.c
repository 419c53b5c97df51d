/* ctl_policy.c — the policy glue: the policy's state from what the controller has
 * seen, the policy asked at a decision point (every iteration, after a snapshot),
 * and its decision carried out: recorded, then a stop request to the workload (a
 * checkpoint at a step all ranks agree on) or, for a workload resizable only by
 * restart, a restart right after a snapshot or at the next one.
 *
 * Invariants:
 *  - the policies are pure functions (policy.c, policy_cost.c); what they decide
 *    is acted on here only, and every decision that acts or is weighed is a
 *    decision record before anything happens;
 *  - no decision while a stop is under way, a resize by restart waits, or a
 *    snapshot's steps are being taken;
 *  - a resize by restart is refused (with its numbers) when the next snapshot is
 *    not due before the job's predicted end. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <string.h>

#include "control/ctl_impl.h"

/* Seconds one resize took in this job, from the decision to the next
 * generation's first iteration, less any wait for spot capacity with no
 * node held: the mean of the resizes so far carried out in place (in_place 1)
 * or by a relaunch (0), which differ (0.10-0.15 s against 0.32-0.41 s here, docs/run.md
 * 5b); NaN: none yet. */
double ctl_switch_seconds(const struct ctl *c, int in_place) {
  double sum = 0;
  int n = 0;
  for (int i = 0; i < c->res->ngens; i++) {
    const struct pit_run_gen *g = &c->res->gens[i];
    /* the next generation's first iteration: its entry, or the running one's */
    double first = i + 1 < c->res->ngens ? c->res->gens[i + 1].t_first_iter : c->t_first_iter;
    /* (first > t1: the next generation has had its first iteration, not only the one before) */
    if (strcmp(g->end, "resized") == 0 && !g->in_place == !in_place && isfinite(g->exit_s) && isfinite(first) && first > g->t1) {
      sum += first - (g->t1 - g->exit_s) - g->idle_s;
      n++;
    }
  }
  return n ? sum / n : NAN;
}

/* The policy's state from what the controller has seen. */
static void policy_state(const struct ctl *c, struct pit_policy_state *s) {
  memset(s, 0, sizeof *s);
  s->gen = c->gen;
  s->step = c->step_next;
  s->total_steps = c->total_steps;
  s->cur = c->cur; /* with its markets: cost and time weigh types and price each node at its market */
  s->nmin = c->o->nmin;
  s->nmax = c->o->nmax;
  if (c->zn.on && c->zn.own) /* the zone layer chooses the count (ctl_zones.c): the cost policy keeps it */
    s->nmin = s->nmax = pit_membership_nodes(&c->cur);
  s->resizable = c->resizable || !c->o->cmd || c->o->resume_by_restart;
  s->t = now_t(c);
  s->spent = ctl_spent(c, s->t);
  s->since_change = c->step_next - c->gen_step0;
  s->switch_s = ctl_switch_seconds(c, 0);
  s->shrink_s = ctl_switch_seconds(c, 1);
  s->restart_s = ctl_restart_seconds(c);
  ctl_obs_state(&c->obs, c->nodes, c->nnodes, c->o->ranks_per_node, s);
  s->ntypes = c->ntypes;
  memcpy(s->types, c->types, (size_t)c->ntypes * sizeof c->types[0]);
}

static int restart_decide(struct ctl *c, const struct pit_choice *ch, const char *policy, struct pit_err *e);
static int stop_to_restart(struct ctl *c);

int ctl_decide(struct ctl *c, struct pit_err *e) {
  if (c->stop_requested || c->restart_pending || c->restart_refused || c->in_snapshot)
    return 0;
  struct pit_policy_state s = {0};
  struct pit_choice ch = {0};
  policy_state(c, &s);
  const char *pol = pit_policy_name(&c->o->policy);
  int rc = 0;
  if (c->spot.on && !s.resizable && !c->zn.on && (rc = ctl_spot_unresumable(c, &ch, e)) != 0) {
    if (rc < 0) /* else on-demand now: the job starts again at step 0 there (SIGTERM, SIGKILL after the grace) */
      return rc;
    c->pending = ch;
    if ((rc = ctl_decision_record(c, &ch, "spot", e)) < 0)
      return rc;
    warn(c, "%s", ch.reason);
    stop_to_restart(c);
    return 0;
  }
  memset(&ch, 0, sizeof ch);
  rc = pit_policy_decide(&c->o->policy, &s, &ch, e); /* its alternatives on the markets they would run on */
  if (rc == 0 && c->spot.on && ch.decided && s.resizable && (rc = ctl_spot_point(c, &ch, e)) == 1)
    return ctl_request_stop(c, &ch, c->zn.on ? "zones" : "spot", -1, e);
  if (rc == 0 && ch.act == PIT_ACT_RESIZE && c->o->resume_by_restart && !c->resizable)
    return restart_decide(c, &ch, pol, e);
  if (rc < 0 || ch.act != PIT_ACT_RESIZE) {
    if (rc == 0 && !s.resizable && !pit_membership_equal(&ch.to, &c->cur) && !c->pending.reason[0]) {
      c->pending = ch; /* said once */
      c->res->recommended++;
      warn(c, "%s", ch.reason);
      return ctl_decision_record(c, &ch, pol, e);
    }
    if (rc == 0 && ch.decided)
      return ctl_decision_record(c, &ch, pol, e);
    return rc;
  }
  return ctl_request_stop(c, &ch, pol, -1, e);
}

int ctl_prior_initial(struct ctl *c, struct pit_err *e) {
  enum pit_policy_kind k = c->o->policy.kind;
  if (c->o->nprior <= 0 || c->zn.on || (k != PIT_POLICY_COST && k != PIT_POLICY_TIME))
    return 0; /* nothing measured before; or the zone layer chooses the first membership */
  struct pit_policy_state s;
  struct pit_choice ch = {0};
  policy_state(c, &s);
  s.at_start = 1;
  s.resizable = 1; /* nothing to checkpoint yet: any membership can be the first */
  int guessed = s.total_steps <= 0 && c->o->start_steps > 0;
  if (guessed)
    s.total_steps = c->o->start_steps;
  int rc = pit_policy_decide(&c->o->policy, &s, &ch, e);
  if (rc < 0 || !ch.decided) /* nothing weighed (cur never measured, or the length unknown under a limit) */
    return rc;
  size_t at = strlen(ch.reason);
  char len[160] = "";
  if (guessed)
    snprintf(len, sizeof len, ", the job's length as an earlier run of its model, data and batch planned it");
  else if (s.total_steps <= 0)
    snprintf(len, sizeof len, ", over %d steps: the job's length is not known yet, and with nothing started the "
             "cheaper per step is the cheaper job", PIT_POLICY_START_STEPS);
  snprintf(ch.reason + at, sizeof ch.reason - at, "; at the start, before any node, from %d membership%s earlier "
           "runs measured (--db)%s", c->o->nprior, c->o->nprior == 1 ? "" : "s", len);
  if ((rc = ctl_decision_record(c, &ch, pit_policy_name(&c->o->policy), e)) < 0)
    return rc;
  warn(c, "%s", ch.reason);
  if (ch.act == PIT_ACT_RESIZE) {
    char to[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&ch.to, to, sizeof to);
    snprintf(c->first_why, sizeof c->first_why, "%s → %s at the start, from earlier runs (--db)", ch.kind, to);
    c->cur = ch.to;
  }
  return 0;
}

/* Carries out ch: the decision record, then the stop request to the
 * workload. node >= 0 (a reclaim notice): SIGTERM to the processes of that
 * node that catch it (per-node launcher; the protocol's "checkpoint within
 * the grace period"), else — and with mpirun, which forwards it — SIGUSR1
 * to every process that catches it. */
int ctl_request_stop(struct ctl *c, const struct pit_choice *ch, const char *policy, int node,
                     struct pit_err *e) {
  c->pending = *ch;
  c->stop_requested = 1;
  c->t_stop_req = now_t(c);
  int rc = ctl_decision_record(c, ch, policy, e);
  if (rc < 0)
    return rc;
  warn(c, "%s", ch->reason);
  ctl_shrink_offer(c, ch, node); /* before the signal: the workload reads it at the agreed step */
  int n = 0;
  for (int i = 0; node >= 0 && i < c->g->nproc; i++)
    if (!c->g->proc[i].exited && c->g->proc[i].node == node)
      n += ctl_w_signal_proc(c->o->world, &c->g->proc[i], SIGTERM, 1);
  if (n > 0)
    warn(c, "SIGTERM to %d process%s of node %s: checkpoint within the grace period", n, n == 1 ? "" : "es",
         c->nodes[node].id);
  for (int i = 0; n == 0 && i < c->g->nproc; i++)
    if (!c->g->proc[i].exited)
      n += ctl_w_signal_proc(c->o->world, &c->g->proc[i], SIGUSR1, 1);
  if (n == 0)
    warn(c, "no process of the workload catches SIGUSR1: it will be stopped at the time-out");
  return 0;
}

/* The resize by restart now: SIGTERM to every process group of the
 * workload (right after a snapshot), SIGKILL after the grace; the next
 * generation is the same command on the new membership. */
static int stop_to_restart(struct ctl *c) {
  c->restart_pending = 0;
  c->restart_stopping = 1;
  c->stop_requested = 1;
  c->t_stop_req = now_t(c);
  int k = 0;
  for (int i = 0; i < c->g->nproc; i++)
    if (!c->g->proc[i].exited)
      k += ctl_w_signal_proc(c->o->world, &c->g->proc[i], SIGTERM, 0);
  return k;
}

void ctl_restart_stop(struct ctl *c) {
  int k = stop_to_restart(c);
  warn(c, "resize by restart: the snapshot at step %lld was just saved; SIGTERM to the workload (%d process "
          "group%s), restarted on the new membership",
       (long long)c->step_safe, k, k == 1 ? "" : "s");
}

/* A resize of a workload resizable by restart: its price is the work since
 * the last snapshot, which a restart redoes. Right after a save (nothing
 * done since): now. Else at the next save, unless that is not due before the
 * job's predicted end: then refused, with the numbers. */
static int restart_decide(struct ctl *c, const struct pit_choice *ch, const char *policy, struct pit_err *e) {
  struct pit_choice d = *ch;
  double tp = ctl_recent_median(c);
  int64_t since = c->step_next - c->step_safe, left = c->total_steps > 0 ? c->total_steps - c->step_next : -1;
  int64_t due = c->save_every > 0 ? c->save_every - since : -1;
  size_t at = strlen(d.reason);
  if (left == 0)
    return 0; /* the job is done: nothing to resize for */
  if (c->snap_step >= 0 && since == 0) {
    if (c->resume_lag > 0)
      snprintf(d.reason + at, sizeof d.reason - at,
               "; by restart right after the snapshot at step %lld (the script resumed %lld steps before its "
               "snapshot last time: %lld steps, %.1f s, to redo)",
               (long long)c->step_safe, (long long)c->resume_lag, (long long)c->resume_lag,
               (double)c->resume_lag * tp);
    else
      snprintf(d.reason + at, sizeof d.reason - at, "; by restart right after the snapshot at step %lld (nothing to redo)",
               (long long)c->step_safe);
    c->pending = d;
    int rc = ctl_decision_record(c, &d, policy, e);
    warn(c, "%s", d.reason);
    ctl_restart_stop(c);
    return rc;
  }
  since += c->resume_lag; /* what a restart now redoes: the steps since the snapshot and the lag before it */
  if (due > 0 && left >= 0 && due > left) {
    snprintf(d.reason + at, sizeof d.reason - at,
             "; refused: a restart now redoes the %lld steps (%.1f s) since the last snapshot, and the next is due "
             "in %lld steps (%.1f s; one every %lld steps), after the job's end in %lld steps (%.1f s)",
             (long long)since, (double)since * tp, (long long)due, (double)due * tp, (long long)c->save_every,
             (long long)left, (double)left * tp);
    d.act = PIT_ACT_KEEP;
    d.to = c->cur;
    c->restart_refused = 1;
    c->res->refused++;
    warn(c, "%s", d.reason);
    return ctl_decision_record(c, &d, policy, e);
  }
  if (due > 0)
    snprintf(d.reason + at, sizeof d.reason - at,
             "; by restart at the next snapshot, due in %lld steps (%.1f s; a restart now would redo %lld steps, "
             "%.1f s%s)",
             (long long)due, (double)due * tp, (long long)since, (double)since * tp,
             c->resume_lag > 0 ? ", the script's lag before its snapshot included" : "");
  else
    snprintf(d.reason + at, sizeof d.reason - at, "; by restart at the next snapshot (none seen yet)");
  c->pending = d;
  c->restart_pending = 1;
  warn(c, "%s", d.reason);
  return ctl_decision_record(c, &d, policy, e);
}

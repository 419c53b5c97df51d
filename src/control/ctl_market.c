/* ctl_market.c — the market layer: which market (spot or on-demand) the run's
 * nodes are on, chosen by pit_spot_decide (src/policy) on what the run has measured
 * and has seen of spot capacity (market.c), and acted on: a decision record for
 * each choice, nodes reshaped onto the market chosen, idle waits for capacity.
 *
 * Invariants:
 *  - the cost and time policies weigh types and price their alternatives on the
 *    markets the run's nodes hold (policy_cost.c); the market of a generation is
 *    this layer's alone: it chooses it for the membership the policy chose;
 *  - a spot start that fails (no capacity) makes the spot policy choose again
 *    rather than failing the run, and the choosing is bounded: after 16 rounds the
 *    run goes on-demand whatever the policy says;
 *  - a running job is never made idle at a decision point;
 *  - every choice of market is recorded with it (spot_mode), and one the spot
 *    policy made with the state it made it on (inputs: pit_spot_in_json), so
 *    `pitstop simulate --replay` decides it again (pit_replay_spot). */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "control/ctl_impl.h"

/* What the job holds: no node, a spot node among them, or on-demand only. */
static enum pit_spot_mode held_mode(const struct ctl *c) {
  if (c->nnodes == 0)
    return PIT_SPOT_IDLE;
  for (int i = 0; i < c->nnodes; i++)
    if (c->nodes[i].spot)
      return PIT_SPOT_SPOT;
  return PIT_SPOT_OD;
}

/* The catalog a membership is put on spot with (types without a spot price stay on-demand). */
static const struct pit_catalog *spot_cat(const struct ctl *c) { return c->have_cat ? &c->cat : NULL; }

/* bare on the market of mode (spot: the types with a spot price; else on-demand). */
static int on_mode(const struct ctl *c, const struct pit_membership *bare, enum pit_spot_mode mode,
                   struct pit_membership *out, struct pit_err *e) {
  return pit_membership_on_market(bare, mode == PIT_SPOT_SPOT ? PIT_MARKET_SPOT : PIT_MARKET_ON_DEMAND, spot_cat(c),
                                  out, e);
}

/* The market every entry of cur names (DEFAULT: bare, or mixed). */
static enum pit_market cur_market(const struct ctl *c) {
  for (int i = 1; i < c->cur.n; i++)
    if (c->cur.m[i].market != c->cur.m[0].market)
      return PIT_MARKET_DEFAULT;
  return c->cur.n ? c->cur.m[0].market : PIT_MARKET_DEFAULT;
}

/* Σ nodes × price of bare on each market (a type without a spot price: its on-demand price). */
static void market_prices(const struct ctl *c, const struct pit_membership *bare, double *od, double *spot) {
  *od = *spot = 0;
  for (int i = 0; i < bare->n; i++) {
    const struct pit_itype *t = c->have_cat ? pit_catalog_find(&c->cat, bare->m[i].itype) : NULL;
    double p = t ? t->price_h : NAN;
    *od += bare->m[i].nodes * p;
    *spot += bare->m[i].nodes * (t && isfinite(t->spot_price_h) ? t->spot_price_h : p);
  }
}

/* Seconds a restart costs in this job: the resizes' mean (decision → first
 * iteration) once there is one, else the run's first start (nodes, launch,
 * init) plus the last checkpoint's time; NaN before the first iteration. */
double ctl_restart_seconds(const struct ctl *c) {
  double sw = ctl_switch_seconds(c, 0); /* a restart is a relaunch */
  if (isfinite(sw))
    return sw;
  return c->first_iter_t + (isfinite(c->last_ckpt_s) ? c->last_ckpt_s : 0);
}

/* The measured PIT time of bare (NaN: none). */
double ctl_meas_tp(const struct ctl *c, const struct pit_membership *bare) {
  for (int i = 0; i < c->obs.nmeas; i++)
    if (pit_membership_equal(&c->obs.meas[i].m, bare))
      return c->obs.meas[i].tp;
  return NAN;
}

double ctl_measured_tp(const struct ctl *c, const struct pit_membership *bare) {
  double tp = ctl_meas_tp(c, bare);
  return isnan(tp) ? ctl_recent_median(c) : tp;
}

/* How long after spot went away it is worth a try again: the spot policy's
 * decision spacing (`every` iterations), at least 1 s. */
double ctl_spot_retry_s(const struct ctl *c) {
  struct pit_membership bare;
  pit_membership_bare(&c->cur, &bare);
  double tick = (double)(c->o->policy.every > 0 ? c->o->policy.every : 50) * ctl_measured_tp(c, &bare);
  return tick > 1 ? tick : 1;
}

/* pit_spot_decide on the run's measurements for the rest of the job on
 * bare, holding `held` (running: the job runs, never made idle); *to its
 * choice, ch (decided) the decision to record: reason, the two markets weighed
 * (the rest of the job's time and cost on each), the choice and the state it
 * was decided on (spot_mode, inputs: the replay decides it again) and, when to
 * differs from held, a resize to bare on that market.
 * 0: decided; 1: nothing measured yet (job length or PIT time unknown). */
static int spot_choose(struct ctl *c, const struct pit_membership *bare, enum pit_spot_mode held, int running,
                       enum pit_spot_mode *to, struct pit_choice *ch, struct pit_err *e) {
  struct ctl_spot_in in = {.t = now_t(c), .deadline_s = c->o->policy.deadline_s, .tp = ctl_measured_tp(c, bare),
                           .restart_s = ctl_restart_seconds(c), .step = c->step_next, .total_steps = c->total_steps,
                           .mode = held};
  if (!(in.tp > 0) || c->total_steps <= 0 || !isfinite(in.restart_s))
    return 1;
  in.tick_s = ctl_spot_retry_s(c);
  market_prices(c, bare, &in.price_h, &in.spot_price_h);
  struct pit_spot_in si = {.policy = PIT_SPOT_PITSTOP, .running = running};
  ctl_spot_state(&c->spot, &in, &si.s);
  const struct pit_spot_state st = si.s;
  *to = pit_spot_in_decide(&si);
  memset(ch, 0, sizeof *ch);
  ch->decided = 1;
  ctl_spot_reason(&st, *to, ch->reason, sizeof ch->reason);
  snprintf(ch->kind, sizeof ch->kind, "%s", pit_spot_mode_name(*to));
  snprintf(ch->spot_mode, sizeof ch->spot_mode, "%s", pit_spot_mode_name(*to));
  int rc = pit_spot_in_json(&si, ch->inputs, sizeof ch->inputs, e);
  if (rc < 0)
    return rc;
  double left = (double)(c->total_steps - c->step_next) * in.tp;
  for (int k = 0; k < 2; k++) { /* the two markets weighed: the rest of the job on each */
    struct pit_policy_alt *a = &ch->alts[ch->nalts++];
    enum pit_spot_mode m = k ? PIT_SPOT_OD : PIT_SPOT_SPOT;
    rc = on_mode(c, bare, m, &a->m, e);
    if (rc < 0)
      return rc;
    snprintf(a->kind, sizeof a->kind, "%s", k ? "on-demand" : "spot");
    snprintf(a->model, sizeof a->model, "measured");
    a->tp = a->tp_lo = a->tp_hi = in.tp;
    a->rest_s = a->rest_lo = a->rest_hi = left + (m == held ? 0 : in.restart_s);
    a->cost = a->cost_hi = a->rest_s / 3600 * (k ? in.price_h : in.spot_price_h); /* forecast: the rest of the job, predicted */
    a->feasible = (m == PIT_SPOT_OD || st.spot_avail) && in.t + a->rest_s <= in.deadline_s;
  }
  ch->act = *to == held ? PIT_ACT_KEEP : PIT_ACT_RESIZE;
  if (*to == PIT_SPOT_IDLE)
    pit_membership_clear(&ch->to);
  else if (*to != held)
    return on_mode(c, bare, *to, &ch->to, e);
  else
    ch->to = c->cur;
  return 0;
}

/* The spot layer at a cost decision point (nodes up, the workload running):
 * the policy's choice ch gets the market pit_spot_decide wants; a keep on
 * the other market becomes a resize onto it. A spot record says why. */
int ctl_spot_point(struct ctl *c, struct pit_choice *ch, struct pit_err *e) {
  if (c->zn.on)
    return ctl_zones_point(c, ch, e);
  struct pit_choice sc = {0};
  struct pit_membership bare;
  pit_membership_bare(&ch->to, &bare);
  enum pit_spot_mode held = held_mode(c), to;
  int rc = spot_choose(c, &bare, held, 1, &to, &sc, e); /* running: never idled (on-demand instead) */
  if (rc != 0)
    return rc < 0 ? rc : 0;
  if (ch->act == PIT_ACT_RESIZE) { /* the cost policy's new membership, on the market chosen (and why) */
    snprintf(ch->reason + strlen(ch->reason), sizeof ch->reason - strlen(ch->reason), "; %s", sc.reason);
    snprintf(ch->spot_mode, sizeof ch->spot_mode, "%s", sc.spot_mode);
    snprintf(ch->inputs, sizeof ch->inputs, "%s", sc.inputs);
    return on_mode(c, &bare, to, &ch->to, e);
  }
  if (to == held) /* recorded as a keep */
    return ctl_decision_record(c, &sc, "spot", e);
  if ((rc = ctl_decision_record(c, ch, pit_policy_name(&c->o->policy), e)) < 0) /* the cost policy's keep */
    return rc;
  *ch = sc;
  return 1;
}

/* A job that cannot resume (no snapshot it restarts from, no checkpoint protocol: every restart
 * starts it at step 0) on spot nodes under a deadline: a reclaim costs all its work so far, not one
 * restart, which the spot policy's guard assumes. So once per generation, at its first decision
 * point with the PIT time and the job's length measured: spot is kept when a reclaim at the last
 * step still leaves time for the whole job on on-demand (t + left + restart + whole ≤ deadline);
 * else the job moves to on-demand now, while little is lost, when that fits (t + restart + whole ≤
 * deadline); else spot is kept (nothing else can meet it) and said. (Once 2 s of the
 * generation's steps are seen, at the slower of their median and their mean pace: under load the
 * first lines came in a burst, their median read 0.061 s for 0.1 s steps, and spot was kept; the
 * observer's steady measurement came only at 16 s, too late to move.) Tried 2026-11-30: a plain
 * script, 10 s long, on spot under a 30 s deadline, reclaimed at step 152 of 200, ended at 29.2 s.
 * 1: the move is decided (the caller stops the generation); 0: kept. */
int ctl_spot_unresumable(struct ctl *c, struct pit_choice *ch, struct pit_err *e) {
  struct pit_membership bare;
  pit_membership_bare(&c->cur, &bare);
  double tp = ctl_measured_tp(c, &bare), R = ctl_restart_seconds(c), t = now_t(c), dl = c->o->policy.deadline_s;
  int64_t done = c->step_next - c->gen_step0;
  double since = t - c->t_first_iter; /* the generation's steps after its first line */
  if (c->unresumable_gen == c->gen + 1 || held_mode(c) != PIT_SPOT_SPOT || done < 5 || !(since >= 2) ||
      !(tp > 0) || c->total_steps <= 0 || !isfinite(R) || !isfinite(dl))
    return 0;
  if (since / (double)(done - 1) > tp) /* the slower of the two: lines that came in a burst read fast */
    tp = since / (double)(done - 1);
  c->unresumable_gen = c->gen + 1;
  double whole = (double)c->total_steps * tp, left = (double)(c->total_steps - c->step_next) * tp;
  double worst = t + left + R + whole;
  memset(ch, 0, sizeof *ch);
  ch->decided = 1;
  snprintf(ch->kind, sizeof ch->kind, "%s", worst <= dl ? "keep" : t + R + whole <= dl ? "on_demand" : "keep");
  snprintf(ch->spot_mode, sizeof ch->spot_mode, "%s", strcmp(ch->kind, "on_demand") ? "spot" : "on_demand");
  const char *head = "the job cannot resume (no snapshot it restarts from): a reclaim restarts it at step 0";
  if (worst <= dl)
    snprintf(ch->reason, sizeof ch->reason,
             "market spot → spot: %s, and one at its last step still leaves the whole job on on-demand before the "
             "deadline (%.1f s + %.1f s left + %.1f s restart + %.1f s ≤ %.0f s)",
             head, t, left, R, whole, dl);
  else if (t + R + whole <= dl)
    snprintf(ch->reason, sizeof ch->reason,
             "market spot → on_demand: %s, and one at its last step would miss the deadline (%.1f s + %.1f s left + "
             "%.1f s restart + %.1f s > %.0f s): on-demand now, %lld step%s redone",
             head, t, left, R, whole, dl, (long long)c->step_next, c->step_next == 1 ? "" : "s");
  else
    snprintf(ch->reason, sizeof ch->reason,
             "market spot → spot: %s, and one would miss the deadline; on-demand from step 0 would miss it too "
             "(%.1f s + %.1f s restart + %.1f s > %.0f s): spot kept, the deadline at risk",
             head, t, R, whole, dl);
  if (strcmp(ch->kind, "on_demand")) {
    ch->to = c->cur;
    int rc = ctl_decision_record(c, ch, "spot", e);
    if (rc == 0 && worst > dl)
      warn(c, "%s", ch->reason);
    return rc;
  }
  ch->act = PIT_ACT_RESIZE;
  int rc = on_mode(c, &bare, PIT_SPOT_OD, &ch->to, e);
  return rc < 0 ? rc : 1;
}

/* A spot start failed in the last reshape: spot capacity is away (said, and
 * e cleared, for the spot policy to choose again). */
static void spot_start_failed(struct ctl *c, struct pit_err *e) {
  warn(c, "no spot capacity (%s): the spot policy chooses again", e->msg);
  ctl_spot_down(&c->spot, now_t(c), ctl_spot_retry_s(c));
  pit_err_clear(e);
}

/* The nodes for want (its types and counts) on the market pit_spot_decide
 * chooses, holding `held` now: each choice a decision record; idle stops
 * every node and waits until spot is worth a try again; a spot start that
 * fails (no capacity) makes it choose again. Bounded: the slack only shrinks
 * while it waits or fails, and the policy turns to on-demand before it runs
 * out (after 16 rounds, on-demand whatever it says). Nothing measured yet
 * (PIT time, job length): on-demand, which cannot miss for spot's sake. */
int ctl_spot_reshape(struct ctl *c, const struct pit_membership *want, enum pit_spot_mode held, const char *why,
                     struct pit_err *e) {
  if (c->zn.on)
    return ctl_zones_reshape(c, NULL, why, e);
  struct pit_choice ch = {0};
  struct pit_membership bare;
  pit_membership_bare(want, &bare);
  for (int round = 0;; round++) {
    enum pit_spot_mode to;
    int rc = spot_choose(c, &bare, held, 0, &to, &ch, e);
    if (rc < 0)
      return rc;
    if (rc == 1 || (round >= 16 && to != PIT_SPOT_OD)) { /* not the policy's: no inputs (the replay follows it) */
      to = PIT_SPOT_OD;
      memset(&ch, 0, sizeof ch);
      ch.act = PIT_ACT_RESIZE;
      ch.decided = 1;
      snprintf(ch.kind, sizeof ch.kind, "on_demand");
      snprintf(ch.spot_mode, sizeof ch.spot_mode, "on_demand");
      snprintf(ch.reason, sizeof ch.reason, "market %s → on_demand: %s", pit_spot_mode_name(held),
               rc == 1 ? "spot is away and nothing is measured yet (PIT time, job length, restart)"
                       : "spot failed 16 times in a row");
      if ((rc = on_mode(c, &bare, PIT_SPOT_OD, &ch.to, e)) < 0)
        return rc;
    }
    if (to == PIT_SPOT_IDLE && c->cur.n > 0)
      ch.act = PIT_ACT_RESIZE; /* every node stops */
    if ((rc = ctl_decision_record(c, &ch, "spot", e)) < 0)
      return rc;
    warn(c, "%s", ch.reason);
    if (to == PIT_SPOT_IDLE) {
      while (c->nnodes > 0)
        if ((rc = ctl_stop_node_at(c, c->nnodes - 1, "stop", e)) < 0)
          return rc;
      pit_membership_clear(&c->cur);
      /* one tick of the policy at most (its idle rule spends one), then it chooses again */
      double t0 = now_t(c), tick = ctl_spot_retry_s(c);
      while (!ctl_spot_avail(&c->spot, now_t(c)) && now_t(c) - t0 < tick) {
        ctl_status(c, "idle", 0);
        usleep(100000);
      }
      if (c->res->ngens > 0) /* not part of the restart overhead the policies plan with */
        c->res->gens[c->res->ngens - 1].idle_s += now_t(c) - t0;
      held = PIT_SPOT_IDLE;
      continue;
    }
    struct pit_membership m;
    if ((rc = on_mode(c, &bare, to, &m, e)) < 0)
      return rc;
    c->spot_failed = 0;
    if ((rc = ctl_reshape(c, &m, why, e)) == 0 || !c->spot_failed)
      return rc;
    spot_start_failed(c, e);
    held = held_mode(c);
  }
}

/* reshape, and with the spot layer on, a failed spot start handed to the
 * spot policy (on-demand or idle) rather than failing the run. */
int ctl_reshape_market(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e) {
  if (c->zn.on)
    return ctl_zones_reshape(c, c->zn.planned ? want : NULL, why, e);
  c->spot_failed = 0;
  int rc = ctl_reshape(c, want, why, e);
  if (rc == 0 || !c->spot.on || !c->spot_failed)
    return rc;
  spot_start_failed(c, e);
  return ctl_spot_reshape(c, want, held_mode(c), why, e);
}

/* The first generation's market, before any measurement: spot when its types
 * have a spot price (the job's length and PIT time are not known yet: the
 * first decision point weighs the slack with measured numbers and turns to
 * on-demand when it runs short). A membership that names its market is kept. */
int ctl_spot_initial(struct ctl *c, struct pit_err *e) {
  if (c->zn.on) /* the zone policy chooses the first membership's zone and markets */
    return 0;
  struct pit_choice ch = {0};
  struct pit_membership bare;
  pit_membership_bare(&c->cur, &bare);
  double od, spot;
  market_prices(c, &bare, &od, &spot);
  if (cur_market(c) != PIT_MARKET_DEFAULT || !(spot < od))
    return 0;
  memset(&ch, 0, sizeof ch);
  ch.act = PIT_ACT_RESIZE;
  ch.decided = 1;
  snprintf(ch.kind, sizeof ch.kind, "spot");
  snprintf(ch.spot_mode, sizeof ch.spot_mode, "spot"); /* no inputs: nothing measured, not the policy's */
  snprintf(ch.reason, sizeof ch.reason,
           "market idle → spot: $%.4f/h spot against $%.4f/h on-demand, nothing measured yet (the first decision "
           "point weighs the slack to the deadline, %.0f s, with the measured PIT time and restart)",
           spot, od, c->o->policy.deadline_s);
  int rc = on_mode(c, &bare, PIT_SPOT_SPOT, &ch.to, e);
  if (rc == 0)
    rc = ctl_decision_record(c, &ch, "spot", e);
  if (rc == 0)
    c->cur = ch.to;
  return rc;
}

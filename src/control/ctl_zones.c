/* ctl_zones.c — the market layer across zones: with the spot layer on (--policy
 * cost --deadline, spot prices), a provider that names two zones or more (the
 * command provider's "zones") and a membership of one instance type, the run's
 * nodes are spot and on-demand nodes of one zone, chosen by pit_zone_decide
 * (src/policy: the fleet policy `pitstop simulate` judges) on what the run has
 * measured and seen of each zone's spot capacity. Every choice is a decision
 * record (policy "zones") with its zone and the inputs it was decided on, so
 * `pitstop simulate --replay` decides them again (pit_replay_zones).
 *
 * Invariants:
 *  - the live nodes are in one zone (zn.want once a reshape ends): a move stops
 *    the old zone's nodes and starts the new zone's;
 *  - a zone's capacity becomes known only from what it did (a spot start that
 *    failed: the spot nodes it held then; a reclaim notice: those held but the
 *    reclaimed one) and only grows again when a spot start there succeeds;
 *  - a reshape is bounded: after 16 rounds of failed spot starts or idle waits
 *    the job goes on-demand in the zone chosen last;
 *  - a running job is never made idle (pit_zone_decide's running);
 *  - the node count: with `--nnodes MIN:MAX` (MIN < MAX) this layer owns it and
 *    pit_zone_decide chooses it within MIN..MAX (the cost policy is asked with
 *    its count held: ctl_policy.c); else it is the cost policy's. */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "control/ctl_impl.h"
#include "pitstop/predict.h"

static int zone_index(const struct ctl *c, const char *name) {
  for (int z = 0; z < c->zn.n; z++)
    if (strcmp(c->zn.z[z].name, name) == 0)
      return z;
  return -1;
}

/* The spot and on-demand nodes held in zone z. */
static void held_in(const struct ctl *c, int z, int *spot, int *od) {
  *spot = *od = 0;
  for (int i = 0; i < c->nnodes; i++)
    if (zone_index(c, c->nodes[i].zone) == z)
      *(c->nodes[i].spot ? spot : od) += 1;
}

void ctl_zones_init(struct ctl *c) {
  struct ctl_zones *zn = &c->zn;
  memset(zn, 0, sizeof *zn);
  zn->want = zn->ckpt = -1;
  struct pit_membership bare;
  pit_membership_bare(&c->o->initial, &bare);
  if (!c->spot.on || c->prov.nzones < 2 || bare.n != 1 || !c->have_cat)
    return;
  const struct pit_itype *t = pit_catalog_find(&c->cat, bare.m[0].itype);
  if (!t || !isfinite(t->spot_price_h))
    return;
  zn->on = 1;
  zn->n = c->prov.nzones;
  zn->nodes = bare.m[0].nodes;
  zn->own = c->o->nmax > 0 && c->o->nmin < c->o->nmax;
  zn->nmin = zn->own ? c->o->nmin : zn->nodes;
  zn->nmax = zn->own ? (c->o->nmax < MAX_NODES ? c->o->nmax : MAX_NODES) : zn->nodes;
  snprintf(zn->itype, sizeof zn->itype, "%s", bare.m[0].itype);
  for (int z = 0; z < zn->n; z++) {
    snprintf(zn->z[z].name, sizeof zn->z[z].name, "%s", c->prov.zones[z]);
    zn->z[z].price_h = t->price_h;
    zn->z[z].spot_price_h = t->spot_price_h;
    zn->up_since[z] = NAN;
  }
}

/* Spans of spot held: one closes where no spot node is held any more. */
static void sync_spans(struct ctl *c) {
  for (int z = 0; z < c->zn.n; z++) {
    int s, o;
    held_in(c, z, &s, &o);
    if (s == 0 && !isnan(c->zn.up_since[z])) {
      c->zn.z[z].up_s += now_t(c) - c->zn.up_since[z];
      c->zn.z[z].nup++;
      c->zn.up_since[z] = NAN;
    }
  }
}

void ctl_zones_spot_up(struct ctl *c, const char *zone) {
  int z = zone_index(c, zone);
  if (!c->zn.on || z < 0)
    return;
  if (isnan(c->zn.up_since[z]))
    c->zn.up_since[z] = now_t(c);
  int s, o;
  held_in(c, z, &s, &o);
  if (c->zn.z[z].known && c->zn.z[z].cap < s)
    c->zn.z[z].cap = s;
}

void ctl_zones_spot_down(struct ctl *c, const char *zone, int reclaimed) {
  int z = zone_index(c, zone);
  if (!c->zn.on || z < 0)
    return;
  int s, o;
  held_in(c, z, &s, &o);
  c->zn.z[z].known = 1;
  c->zn.z[z].cap = s - reclaimed > 0 ? s - reclaimed : 0;
  c->zn.reclaimed += reclaimed; /* the next zone decision's input (the fleet rule's reclaim) */
}

/* The scaling fit of the type's measured counts (USL, at least 3 counts; else linear: 0, 0). */
static void scaling_fit(const struct ctl *c, double *sigma, double *kappa) {
  struct pit_usl_point pt[PIT_POLICY_MEAS_MAX];
  int np = 0;
  *sigma = *kappa = 0;
  for (int i = 0; i < c->obs.nmeas; i++) {
    const struct pit_policy_meas *q = &c->obs.meas[i];
    if (q->m.n == 1 && strcmp(q->m.m[0].itype, c->zn.itype) == 0 && q->tp > 0)
      pt[np++] = (struct pit_usl_point){.n = q->m.m[0].nodes, .x = 1.0 / q->tp, .x_half = NAN};
  }
  struct pit_usl fit;
  struct pit_err e2 = {0};
  if (np >= 3 && pit_usl_fit(pt, np, &fit, &e2) == 0 && isfinite(fit.sigma) && isfinite(fit.kappa)) {
    *sigma = fit.sigma > 0 ? fit.sigma : 0;
    *kappa = fit.kappa > 0 ? fit.kappa : 0;
  }
}

/* What pit_zone_decide gets: the run's measurements and the zones as seen. The
 * PIT time: measured on the job's count, else on the count the job runs (its
 * recent steps), which pit_zone_decide takes to the job's count by the fit. */
static void zone_inputs(struct ctl *c, int running, struct pit_zone_in *in) {
  memset(in, 0, sizeof *in);
  sync_spans(c);
  int ran = pit_membership_nodes(&c->cur) > 0 ? pit_membership_nodes(&c->cur) : c->zn.nodes;
  struct pit_membership bare, own; /* the type on the nodes it runs, and on the job's count */
  pit_membership_clear(&bare);
  pit_membership_clear(&own);
  struct pit_err e2 = {0};
  pit_membership_add(&bare, c->zn.itype, ran, -1, &e2);
  pit_membership_add(&own, c->zn.itype, c->zn.nodes, -1, &e2);
  in->t_s = now_t(c);
  in->deadline_s = c->o->policy.deadline_s;
  in->tp_nodes = c->zn.nodes;
  in->tp_s = ctl_meas_tp(c, &own);
  if (!(in->tp_s > 0)) {
    in->tp_s = ctl_measured_tp(c, &bare);
    in->tp_nodes = ran;
  }
  in->nmin = c->zn.own ? c->zn.nmin : c->zn.nodes;
  in->nmax = c->zn.own ? c->zn.nmax : c->zn.nodes;
  if (c->zn.own)
    scaling_fit(c, &in->sigma, &in->kappa);
  in->restart_s = ctl_restart_seconds(c);
  in->step = c->step_next;
  in->total_steps = c->total_steps;
  in->measured = in->tp_s > 0 && c->total_steps > 0 && isfinite(in->restart_s);
  if (!in->measured)
    in->tp_s = in->restart_s = 0;
  in->tick_s = in->measured ? ctl_spot_retry_s(c) : 0;
  in->running = running;
  struct ctl_spot_in si = {.t = in->t_s, .deadline_s = 0, .tp = 1, .tick_s = 1};
  struct pit_spot_state st;
  ctl_spot_state(&c->spot, &si, &st);
  in->any_seen = st.avail_seen;
  in->nodes = c->zn.nodes;
  in->nzones = c->zn.n;
  for (int z = 0; z < c->zn.n; z++) {
    in->z[z] = c->zn.z[z];
    if (!isnan(c->zn.up_since[z])) { /* the current span counts */
      in->z[z].up_s += in->t_s - c->zn.up_since[z];
      in->z[z].nup++;
    }
  }
  in->cur.pool = 0;
  for (int z = 0; z < c->zn.n; z++) {
    int s, o;
    held_in(c, z, &s, &o);
    if (s + o > in->cur.spot + in->cur.od)
      in->cur = (struct pit_sim_member){z, s, o};
  }
  in->ckpt_zone = c->ckpt[0] ? c->zn.ckpt : -1;
  in->reclaimed = c->zn.reclaimed;
}

/* The membership of r: the type's spot and on-demand nodes. */
static int member_of(const struct ctl *c, struct pit_sim_member r, struct pit_membership *m, struct pit_err *e) {
  pit_membership_clear(m);
  int rc = 0;
  if (r.spot > 0)
    rc = pit_membership_add_on(m, c->zn.itype, PIT_MARKET_SPOT, r.spot, -1, e);
  if (rc == 0 && r.od > 0)
    rc = pit_membership_add_on(m, c->zn.itype, PIT_MARKET_ON_DEMAND, r.od, -1, e);
  return rc;
}

/* pit_zone_decide asked now; *r its choice, ch the decision to record. */
static int zone_choose(struct ctl *c, int running, struct pit_sim_member *r, struct pit_choice *ch,
                       struct pit_err *e) {
  struct pit_zone_in in;
  zone_inputs(c, running, &in);
  *r = pit_zone_decide(&in);
  c->zn.reclaimed = 0; /* weighed once, as the simulator's tick of the reclaim */
  memset(ch, 0, sizeof *ch);
  ch->decided = 1;
  int same = r->spot == in.cur.spot && r->od == in.cur.od && (r->spot + r->od == 0 || r->pool == in.cur.pool);
  ch->act = same ? PIT_ACT_KEEP : PIT_ACT_RESIZE;
  snprintf(ch->kind, sizeof ch->kind, "%s",
           same ? "keep" : in.cur.spot + in.cur.od && r->pool != in.cur.pool && r->spot + r->od ? "zone" : "market");
  pit_zone_reason(&in, *r, ch->reason, sizeof ch->reason);
  if (r->spot + r->od)
    snprintf(ch->zone, sizeof ch->zone, "%s", c->zn.z[r->pool].name);
  int rc = pit_zone_in_json(&in, ch->inputs, sizeof ch->inputs, e);
  if (rc == 0)
    rc = member_of(c, *r, &ch->to, e);
  return rc;
}

/* The nodes of want (NULL: pit_zone_decide chooses) in zone zn.want; a spot start
 * that fails tells the zone's capacity and the policy chooses again; idle stops
 * every node and waits a tick. Bounded (16 rounds, then on-demand). */
int ctl_zones_reshape(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e) {
  struct pit_membership m;
  pit_membership_clear(&m);
  if (want)
    m = *want;
  c->zn.planned = 0;
  for (int round = 0;; round++) {
    int rc;
    if (!want) {
      struct pit_choice ch;
      struct pit_sim_member r;
      if ((rc = zone_choose(c, 0, &r, &ch, e)) < 0)
        return rc;
      if (round >= 16) {
        r = (struct pit_sim_member){c->zn.want >= 0 ? c->zn.want : 0, 0, c->zn.nodes};
        ch.act = PIT_ACT_RESIZE;
        ch.inputs[0] = 0; /* not the policy's: not replayed */
        snprintf(ch.kind, sizeof ch.kind, "on_demand");
        snprintf(ch.reason, sizeof ch.reason, "zones: spot failed or waited 16 times in a row: on-demand in %s",
                 c->zn.z[r.pool].name);
        snprintf(ch.zone, sizeof ch.zone, "%s", c->zn.z[r.pool].name);
        if ((rc = member_of(c, r, &ch.to, e)) < 0)
          return rc;
      }
      if (r.spot + r.od == 0 && c->cur.n > 0)
        ch.act = PIT_ACT_RESIZE; /* every node stops */
      if ((rc = ctl_decision_record(c, &ch, "zones", e)) < 0)
        return rc;
      if (ch.act == PIT_ACT_RESIZE)
        warn(c, "%s", ch.reason);
      if (r.spot + r.od == 0) { /* idle: wait a tick, then choose again */
        while (c->nnodes > 0)
          if ((rc = ctl_stop_node_at(c, c->nnodes - 1, "stop", e)) < 0)
            return rc;
        pit_membership_clear(&c->cur);
        sync_spans(c);
        double t0 = now_t(c), tick = ctl_spot_retry_s(c);
        while (now_t(c) - t0 < tick) {
          ctl_status(c, "idle", 0);
          usleep(100000);
        }
        if (c->res->ngens > 0)
          c->res->gens[c->res->ngens - 1].idle_s += now_t(c) - t0;
        continue;
      }
      c->zn.want = r.pool;
      m = ch.to;
    }
    c->spot_failed = 0;
    rc = ctl_reshape(c, &m, why, e);
    sync_spans(c);
    if (rc == 0) {
      c->zn.ckpt = c->zn.want;
      return 0;
    }
    if (!c->spot_failed)
      return rc;
    warn(c, "no spot capacity in zone %s (%s): the zone policy chooses again", c->zn.z[c->zn.want].name, e->msg);
    ctl_zones_spot_down(c, c->zn.z[c->zn.want].name, 0);
    ctl_spot_down(&c->spot, now_t(c), ctl_spot_retry_s(c));
    pit_err_clear(e);
    want = NULL;
  }
}

/* At a cost decision point (nodes up, the workload running): the zone policy's
 * choice; 1 with *ch the resize to request when it differs from what is held
 * (zn.planned: the reshape carries it out as chosen), else its keep recorded. */
int ctl_zones_point(struct ctl *c, struct pit_choice *ch, struct pit_err *e) {
  struct pit_choice zc;
  struct pit_sim_member r;
  int nodes = pit_membership_nodes(&ch->to);
  if (nodes > 0 && !c->zn.own)
    c->zn.nodes = nodes; /* the cost policy's node count (a node range: this layer's, zone_inputs) */
  int rc = zone_choose(c, 1, &r, &zc, e);
  if (rc < 0)
    return rc;
  if (ch->act == PIT_ACT_RESIZE && ch->decided) /* the cost policy's own resize: recorded as its */
    snprintf(zc.reason + strlen(zc.reason), sizeof zc.reason - strlen(zc.reason), "; %.400s", ch->reason);
  if (zc.act == PIT_ACT_KEEP)
    return ctl_decision_record(c, &zc, "zones", e);
  if (ch->act != PIT_ACT_RESIZE && (rc = ctl_decision_record(c, ch, pit_policy_name(&c->o->policy), e)) < 0)
    return rc; /* the cost policy's keep */
  c->zn.want = r.pool;
  c->zn.planned = 1;
  *ch = zc;
  return 1;
}

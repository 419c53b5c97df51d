/* policy_cost.c — the `cost` and `time` policies: at a decision point, the
 * rest of the job predicted on each alternative membership (keep, add a node
 * of a type, remove a node, switch type, go back to a measured membership,
 * add or remove several nodes of a type at once), and a move only when it
 * pays for the switch with a margin; while the kept membership meets the
 * deadline, a move only to one that meets it at the high end of its interval
 * with a switch to spare.
 *
 * Invariants: a pure function of (policy, state) — no clock, no I/O, no
 * globals, so live runs, replays, the simulator and tests share it; every
 * alternative stays within the node bounds; an alternative without a model
 * (no measurement, no split, no fit, no catalog speed) is not weighed, never
 * guessed; the decision compares the kept membership at its interval's LOW
 * end with the candidate at its HIGH end, so a candidate's uncertainty (wide
 * for never-measured ones) counts against it and two measured memberships
 * whose intervals overlap never alternate. docs/decide.md has a worked
 * example.
 *
 * Markets: the policy weighs types — measurements, per-rank splits and moves
 * are of bare memberships (markets dropped: a spot and an on-demand node of a
 * type compute alike) — and prices each alternative at the market its nodes
 * would run on (pit_policy_price_h: spot at the type's spot price). A
 * candidate's nodes of a type go on the market the current membership holds
 * that type on (on_markets): adding a node of a type held on spot adds a spot
 * node, as the run's market layer would start it, so it is priced at spot, not
 * at on-demand. A type held on both markets (the zone layer's split) keeps its
 * spot nodes up to the candidate's count and the rest on-demand (spot gave no
 * more than it holds). A type not held now goes on the market every current
 * node shares (spot only where the type has a spot price, else on-demand, as
 * the market layer puts it), or the default market when they differ. Keep is
 * the current membership itself. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/policy.h"
#include "pitstop/predict.h"

/* 95% relative half-width of a t_p predicted from the current ranks'
 * compute/wait split (types present in the current membership) and from the
 * catalog's relative speed (types never seen in this job). */
#define REL_SPLIT 0.15
#define REL_SPEED 0.50
/* Seconds one resize is assumed to cost before the job has measured one or
 * its first start. */
#define SWITCH_S_UNMEASURED 5.0

/* Seconds one resize costs: the job's resizes by relaunch (measured), else its
 * first start (nodes, launch, init, plus the last checkpoint's time: what a
 * resize does again), else the assumption; *src says which. */
static double switch_seconds(const struct pit_policy_state *s, const char **src) {
  if (s->at_start) /* nothing started: the first membership costs its own start, whichever it is */
    return *src = "nothing started yet", 0;
  if (s->switch_s > 0)
    return *src = "measured", s->switch_s;
  if (s->restart_s > 0)
    return *src = "as the job's first start", s->restart_s;
  return *src = "assumed", SWITCH_S_UNMEASURED;
}

/* 1 when `to` only removes nodes from `from` (each type on each market at most
 * as many nodes, fewer in all): a change the controller may carry out in place. */
static int removes_only(const struct pit_membership *from, const struct pit_membership *to) {
  int left = 0, right = 0;
  for (int i = 0; i < from->n; i++)
    left += from->m[i].nodes;
  for (int j = 0; j < to->n; j++) {
    int have = 0;
    for (int i = 0; i < from->n; i++)
      if (strcmp(from->m[i].itype, to->m[j].itype) == 0 && from->m[i].market == to->m[j].market)
        have += from->m[i].nodes;
    if (to->m[j].nodes > have)
      return 0;
    right += to->m[j].nodes;
  }
  return right < left;
}

/* Seconds the change from `from` to `to` costs: a removal at what this job's
 * removals in place cost (measured; none measured: as a relaunch, the dearer),
 * anything else at a relaunch's (switch_seconds); *src says which. */
static double change_seconds(const struct pit_policy_state *s, const struct pit_membership *from,
                             const struct pit_membership *to, const char **src) {
  if (!s->at_start && s->shrink_s > 0 && removes_only(from, to))
    return *src = "measured in place", s->shrink_s;
  return switch_seconds(s, src);
}

double pit_policy_price_h(const struct pit_policy_state *s, const struct pit_membership *m) {
  double p = 0;
  for (int i = 0; i < m->n; i++) {
    const struct pit_policy_type *t = NULL;
    for (int k = 0; k < s->ntypes && !t; k++)
      if (strcmp(s->types[k].itype, m->m[i].itype) == 0)
        t = &s->types[k];
    if (!t)
      return NAN;
    double price = t->price_h;
    if (m->m[i].market == PIT_MARKET_SPOT && !((price = t->spot_price_h) > 0))
      return NAN; /* on spot, and spot not offered */
    p += m->m[i].nodes * price; /* rate: $/h, no time */
  }
  return p;
}

static const struct pit_policy_type *find_type(const struct pit_policy_state *s, const char *itype) {
  for (int k = 0; k < s->ntypes; k++)
    if (strcmp(s->types[k].itype, itype) == 0)
      return &s->types[k];
  return NULL;
}

static double spot_price_of(const struct pit_policy_state *s, const char *itype) {
  const struct pit_policy_type *t = find_type(s, itype);
  return t && t->spot_price_h > 0 ? t->spot_price_h : NAN;
}

/* bare (a membership the policy weighs) on the markets cur (the current
 * membership, with its markets) holds: the rule of the header comment.
 * -1: more entries than a membership holds (not weighed). */
static int on_markets(const struct pit_policy_state *s, const struct pit_membership *cur,
                      const struct pit_membership *bare, struct pit_membership *out) {
  struct pit_membership b;
  pit_membership_bare(cur, &b);
  if (pit_membership_equal(&b, bare)) {
    *out = *cur;
    return 0;
  }
  enum pit_market all = cur->n ? cur->m[0].market : PIT_MARKET_DEFAULT; /* the market every node shares */
  for (int i = 1; i < cur->n; i++)
    if (cur->m[i].market != all)
      all = PIT_MARKET_DEFAULT;
  struct pit_membership t; /* out may be bare */
  pit_membership_clear(&t);
  for (int i = 0; i < bare->n; i++) {
    const struct pit_member *m = &bare->m[i];
    int held[3] = {0, 0, 0}; /* cur's nodes of the type by market */
    for (int k = 0; k < cur->n; k++)
      if (strcmp(cur->m[k].itype, m->itype) == 0)
        held[cur->m[k].market] += cur->m[k].nodes;
    int spot, sp = held[PIT_MARKET_SPOT], od = held[PIT_MARKET_ON_DEMAND], df = held[PIT_MARKET_DEFAULT];
    enum pit_market rest;
    if (sp + od + df == 0) { /* not held: the market every node shares */
      spot = all == PIT_MARKET_SPOT && !isnan(spot_price_of(s, m->itype)) ? m->nodes : 0;
      rest = all == PIT_MARKET_SPOT ? PIT_MARKET_ON_DEMAND : all;
    } else {
      spot = od + df == 0 ? m->nodes : sp < m->nodes ? sp : m->nodes;
      rest = od > 0 ? PIT_MARKET_ON_DEMAND : PIT_MARKET_DEFAULT;
    }
    if ((spot > 0 && pit_membership_add_on(&t, m->itype, PIT_MARKET_SPOT, spot, m->ranks_per_node, NULL) < 0) ||
        (m->nodes - spot > 0 && pit_membership_add_on(&t, m->itype, rest, m->nodes - spot, m->ranks_per_node, NULL) < 0))
      return -1;
  }
  *out = t;
  return 0;
}

static const struct pit_policy_meas *find_meas(const struct pit_policy_state *s, const struct pit_membership *m) {
  for (int i = 0; i < s->nmeas; i++)
    if (pit_membership_equal(&s->meas[i].m, m) && s->meas[i].tp > 0)
      return &s->meas[i];
  return NULL;
}

static int rpn_of(const struct pit_member *m) { return m->ranks_per_node > 0 ? m->ranks_per_node : 1; }

/* Compute seconds per sample of one rank of itype, from the current nodes'
 * split (rel REL_SPLIT) or, for a type not in the membership, scaled by the
 * catalog's speeds (rel REL_SPEED). NaN when neither is known. */
static double cps_of(const struct pit_policy_state *s, const char *itype, double *rel) {
  int ranks = pit_membership_ranks(&s->cur);
  if (ranks <= 0)
    ranks = pit_membership_nodes(&s->cur);
  if (s->batch <= 0 || ranks <= 0 || s->nnodes <= 0)
    return NAN;
  double local = (double)s->batch / ranks; /* equal shares */
  double sum = 0, ref_cps = NAN, ref_speed = NAN;
  int n = 0;
  for (int i = 0; i < s->nnodes; i++) {
    double c = s->nodes[i].compute_s;
    if (!(c > 0))
      return NAN; /* no split: no model */
    if (strcmp(s->nodes[i].itype, itype) == 0) {
      sum += c / local;
      n++;
    }
    const struct pit_policy_type *t = find_type(s, s->nodes[i].itype);
    if (isnan(ref_cps) && t && t->speed > 0) {
      ref_cps = c / local;
      ref_speed = t->speed;
    }
  }
  if (n) {
    *rel = REL_SPLIT;
    return sum / n;
  }
  const struct pit_policy_type *t = find_type(s, itype);
  if (!t || !(t->speed > 0) || isnan(ref_cps))
    return NAN;
  *rel = REL_SPEED;
  return ref_cps * ref_speed / t->speed;
}

/* t_p of m by the USL fit over the measured counts of its one type. */
static int tp_usl(const struct pit_policy_state *s, const struct pit_membership *m, double *tp, double *lo,
                  double *hi) {
  if (m->n != 1)
    return 0;
  struct pit_usl_point pt[PIT_POLICY_MEAS_MAX];
  int np = 0;
  for (int i = 0; i < s->nmeas; i++) {
    const struct pit_policy_meas *q = &s->meas[i];
    if (q->m.n == 1 && strcmp(q->m.m[0].itype, m->m[0].itype) == 0 && q->tp > 0) {
      pt[np].n = q->m.m[0].nodes;
      pt[np].x = 1.0 / q->tp;
      pt[np].x_half = q->tp_half > 0 ? pt[np].x * q->tp_half / q->tp : NAN;
      np++;
    }
  }
  struct pit_usl fit;
  struct pit_err e2 = {0};
  if (np < 3 || pit_usl_fit(pt, np, &fit, &e2) < 0)
    return 0;
  double x, xl, xh;
  pit_usl_predict(&fit, m->m[0].nodes, &x, &xl, &xh);
  if (!(x > 0))
    return 0;
  *tp = 1.0 / x;
  *lo = xh > 0 ? 1.0 / xh : *tp;
  *hi = xl > 0 ? 1.0 / xl : INFINITY;
  return 1;
}

/* The collective's time (beyond the slowest rank's compute) on `ranks` ranks
 * of m: a least-squares line in the rank count through the current
 * membership's (comm_cur on ranks_cur) and every other measured membership's
 * of the same one type (its t_p minus its ranks' compute at cps seconds per
 * sample, equal shares), when they span two rank counts or more; else
 * comm_cur. Only for fewer ranks than now, of a one-type m and current
 * membership, and only to lower the estimate: between 0 and comm_cur (a
 * collective that grows with the ranks is not assumed as large on fewer; a
 * line extrapolated to more ranks would overstate a saturating one). */
static double comm_line(const struct pit_policy_state *s, const struct pit_membership *m, int ranks, int ranks_cur,
                        double comm_cur, double cps) {
  if (m->n != 1 || s->cur.n != 1 || strcmp(m->m[0].itype, s->cur.m[0].itype) != 0 || ranks >= ranks_cur ||
      s->batch <= 0)
    return comm_cur;
  double sx = ranks_cur, sy = comm_cur, sxx = (double)ranks_cur * ranks_cur, sxy = ranks_cur * comm_cur;
  int n = 1, other = 0;
  for (int i = 0; i < s->nmeas; i++) {
    const struct pit_policy_meas *q = &s->meas[i];
    if (q->m.n != 1 || strcmp(q->m.m[0].itype, m->m[0].itype) != 0 || !(q->tp > 0) ||
        pit_membership_equal(&q->m, &s->cur))
      continue;
    int r = q->m.m[0].nodes * rpn_of(&q->m.m[0]);
    if (r < 1 || r == ranks_cur)
      continue;
    double c = q->tp - cps * (double)s->batch / r;
    c = c > 0 ? c : 0;
    sx += r, sy += c, sxx += (double)r * r, sxy += r * c;
    n++, other++;
  }
  double den = n * sxx - sx * sx;
  if (!other || !(fabs(den) > 1e-12))
    return comm_cur;
  double b = (n * sxy - sx * sy) / den, a = (sy - b * sx) / n, c = a + b * ranks;
  return c < 0 ? 0 : c < comm_cur ? c : comm_cur;
}

/* t_p of m from the per-rank split: equal shares (the slowest rank sets the
 * pace) or auto shares (speeds add), plus what the current step spends
 * beyond its slowest rank's compute (collective, data) when m has more than
 * one rank. */
static int tp_split(const struct pit_policy_state *s, const struct pit_membership *m, double tp_cur, int auto_shares,
                    double *tp, double *lo, double *hi) {
  struct pit_hetero_type ht[PIT_MEMBERS_MAX];
  double rel = 0, maxc = 0;
  for (int i = 0; i < s->nnodes; i++)
    if (s->nodes[i].compute_s > maxc)
      maxc = s->nodes[i].compute_s;
  int ranks = 0;
  for (int i = 0; i < m->n; i++) {
    double r = 0;
    ht[i].ranks = m->m[i].nodes * rpn_of(&m->m[i]);
    ht[i].compute_per_sample = cps_of(s, m->m[i].itype, &r);
    if (!(ht[i].compute_per_sample > 0))
      return 0;
    rel = r > rel ? r : rel;
    ranks += ht[i].ranks;
  }
  double comm = ranks > 1 && tp_cur > maxc ? tp_cur - maxc : 0;
  int ranks_cur = pit_membership_ranks(&s->cur);
  if (ranks > 1 && comm > 0)
    comm = comm_line(s, m, ranks, ranks_cur > 0 ? ranks_cur : pit_membership_nodes(&s->cur), comm,
                     ht[0].compute_per_sample);
  if (ranks > 1 && (ranks_cur > 0 ? ranks_cur : pit_membership_nodes(&s->cur)) == 1)
    rel = REL_SPEED; /* one rank shows no collective: its cost is unknown */
  const char *model;
  struct pit_err e2 = {0};
  if (pit_hetero_step(ht, m->n, s->batch, comm, auto_shares ? PIT_SHARES_AUTO : PIT_SHARES_EQUAL, tp, &model,
                      &e2) < 0)
    return 0;
  *lo = *tp * (1 - rel);
  *hi = *tp * (1 + rel);
  return 1;
}

static int in_bounds(const struct pit_policy_state *s, const struct pit_membership *m) {
  int n = pit_membership_nodes(m);
  return n >= 1 && n >= s->nmin && (s->nmax <= 0 || n <= s->nmax);
}

static int have_alt(const struct pit_choice *c, const struct pit_membership *m) {
  for (int i = 0; i < c->nalts; i++)
    if (pit_membership_equal(&c->alts[i].m, m))
      return 1;
  return 0;
}

struct ctx {
  const struct pit_policy *p;
  const struct pit_policy_state *s;  /* bare: cur and meas without markets */
  const struct pit_membership *mk;   /* the current membership with its markets (on_markets) */
  int64_t rest_steps;
  double tp_cur, tp_cur_half, sw; /* sw: a relaunch's seconds (switch_seconds; every way back is one) */
};

/* Predicts the rest of the job on m (bare) and appends it, on its markets
 * (on_markets) at their prices; not when no model, no price (a type not in
 * the catalog, or on spot without a spot price) or full. */
static void add_alt(struct ctx *x, struct pit_choice *c, const struct pit_membership *m, const char *kind) {
  const struct pit_policy_state *s = x->s;
  struct pit_membership on;
  if (c->nalts == PIT_POLICY_ALTS_MAX || !in_bounds(s, m) || on_markets(s, x->mk, m, &on) < 0 || have_alt(c, &on))
    return;
  double price = pit_policy_price_h(s, &on);
  if (!(price >= 0))
    return;
  struct pit_policy_alt a;
  memset(&a, 0, sizeof a);
  a.m = on;
  snprintf(a.kind, sizeof a.kind, "%s", kind);
  const struct pit_policy_meas *q = find_meas(s, m);
  int keep = pit_membership_equal(m, &s->cur);
  if (q) {
    a.tp = q->tp;
    double h = q->tp_half > 0 ? q->tp_half : 0;
    a.tp_lo = q->tp - h;
    a.tp_hi = q->tp + h;
    snprintf(a.model, sizeof a.model, "measured (%lld iterations)", (long long)q->n);
  } else if (tp_usl(s, m, &a.tp, &a.tp_lo, &a.tp_hi)) {
    snprintf(a.model, sizeof a.model, "USL fit of measured counts");
  } else if (tp_split(s, m, x->tp_cur, 0, &a.tp, &a.tp_lo, &a.tp_hi)) {
    snprintf(a.model, sizeof a.model, "per-rank split%s, equal shares",
             a.tp_hi > a.tp * (1 + REL_SPLIT) * (1 + 1e-9) ? " + catalog speed" : "");
  } else {
    return;
  }
  const char *src;
  double sw = keep ? 0 : change_seconds(s, x->mk, &on, &src);
  a.switch_s = sw;
  a.switch_src = keep ? "kept" : src;
  double n = (double)x->rest_steps;
  a.rest_s = n * a.tp + sw;
  a.rest_lo = n * a.tp_lo + sw;
  a.rest_hi = n * a.tp_hi + sw;
  a.cost = price / 3600.0 * a.rest_s; /* forecast: the rest of the job, predicted */
  a.cost_hi = price / 3600.0 * a.rest_hi; /* forecast: the rest of the job, predicted */
  a.feasible = (isnan(x->p->deadline_s) || s->t + a.rest_s <= x->p->deadline_s) &&
               (isnan(x->p->budget) || s->spent + a.cost <= x->p->budget);
  c->alts[c->nalts++] = a;
}

/* The objective: cost (US$) or time (s); lo/hi: at the interval's ends. */
static double obj(const struct ctx *x, const struct pit_policy_alt *a, int end) {
  double price = pit_policy_price_h(x->s, &a->m);
  double t = end < 0 ? a->rest_lo : end > 0 ? a->rest_hi : a->rest_s;
  return x->p->kind == PIT_POLICY_COST ? price / 3600.0 * t : t; /* forecast: the rest of the job, predicted */
}

static void fmt_obj(const struct ctx *x, double v, char *b, size_t n) {
  if (x->p->kind == PIT_POLICY_COST)
    snprintf(b, n, "$%.5f", v);
  else
    snprintf(b, n, "%.1f s", v);
}

/* 1 when trying a under the deadline cannot miss it although a's high end
 * over the whole rest would: a meets the deadline at its central prediction
 * with two switches to spare (the way back, and one more: a trial at the
 * margin, where the remaining time has just come to fit the central
 * prediction, is as likely to fail as not, and a failed one returns), and,
 * with the switch measured in this job (an
 * assumed one proves nothing), a's high end until the trial's
 * first decision point at the latest (the observer's cap, rounded up to a
 * decision point), the switch there and back, then the rest on the kept
 * membership at its high end, end by the deadline. At that point a is
 * measured: the policy keeps it only if it meets the deadline (a membership
 * that does not is left for one that does). */
static int recoverable(const struct ctx *x, const struct pit_policy_alt *keep, const struct pit_policy_alt *a,
                       int64_t every) {
  const struct pit_policy_state *s = x->s;
  if (!(s->switch_s > 0) || !keep->feasible || s->t + a->rest_s + 2 * x->sw > x->p->deadline_s)
    return 0;
  int64_t w = (PIT_POLICY_MEASURE_MAX + every - 1) / every * every;
  if (w > x->rest_steps)
    w = x->rest_steps;
  double end = s->t + (double)w * a->tp_hi + 2 * x->sw + (double)(x->rest_steps - w) * keep->tp_hi;
  return end <= x->p->deadline_s;
}

/* The trial rule, for candidates the cautious rule turned down whose t_p
 * comes from this job's own per-rank split (never measured; not from the
 * catalog's speeds, whose ±50% stays under the cautious rule): try the one
 * whose central prediction gains most over keeping at its low end, when that
 * gain exceeds (1 + margin) × what trying costs at worst — the switch back,
 * and `every` iterations (the measurement before the next decision point) at
 * the candidate's high end against keeping's low end. Trying makes it
 * measured, so from then on the cautious rule alone weighs it: one trial per
 * membership, never an alternation. Under a deadline the candidate meets it
 * at its high end with a switch to spare, or the trial is recoverable (above).
 * Returns 1 (c set) when it tries one. */
static int try_split(const struct ctx *x, struct pit_choice *c, int64_t every) {
  const struct pit_policy *p = x->p;
  const struct pit_policy_state *s = x->s;
  const struct pit_policy_alt *keep = &c->alts[0];
  double pk = pit_policy_price_h(s, &keep->m), keep_obj = obj(x, keep, -1);
  double window = (double)(every < x->rest_steps ? every : x->rest_steps);
  int best = -1;
  double best_net = 0, best_gain = 0, best_try = 0;
  for (int i = 1; i < c->nalts; i++) {
    const struct pit_policy_alt *a = &c->alts[i];
    if (strncmp(a->model, "per-rank split", 14) != 0 || strstr(a->model, "catalog") || !a->feasible)
      continue;
    if (!isnan(p->deadline_s) && s->t + a->rest_hi + x->sw > p->deadline_s && !recoverable(x, keep, a, every))
      continue; /* as the cautious rule: a switch to spare at its high end, or a way back that meets it */
    double pa = pit_policy_price_h(s, &a->m);
    double sw = p->kind == PIT_POLICY_COST ? a->switch_s / 3600.0 * fmax(pk, pa) : a->switch_s;
    double excess = p->kind == PIT_POLICY_COST ? (pa * a->tp_hi - pk * keep->tp_lo) / 3600.0 : a->tp_hi - keep->tp_lo;
    double trying = sw + window * fmax(0, excess);
    double gain = keep_obj - obj(x, a, 0);
    if (gain > (1 + p->margin) * trying && gain - trying > best_net) {
      best = i;
      best_net = gain - trying;
      best_gain = gain;
      best_try = trying;
    }
  }
  if (best < 0)
    return 0;
  const struct pit_policy_alt *b = &c->alts[best];
  char cur[PIT_MEMBERSHIP_TEXT_MAX], to[PIT_MEMBERSHIP_TEXT_MAX], vk[32], vb[32], vg[32], vt[32];
  pit_membership_format(&keep->m, cur, sizeof cur);
  pit_membership_format(&b->m, to, sizeof to);
  fmt_obj(x, keep_obj, vk, sizeof vk);
  fmt_obj(x, obj(x, b, 0), vb, sizeof vb);
  fmt_obj(x, best_gain, vg, sizeof vg);
  fmt_obj(x, best_try, vt, sizeof vt);
  c->to = b->m;
  snprintf(c->kind, sizeof c->kind, "%s", b->kind);
  snprintf(c->reason, sizeof c->reason,
           "%s %s (a trial, from %s): never measured, the rest predicted %s (t_p %.4g s [%.4g, %.4g], %s) against "
           "%s kept at its low end; the gain %s exceeds %.0f%% of what trying costs at worst, %s (the switch back "
           "and %.0f iterations at its high end)%s",
           b->kind, to, cur, vb, b->tp, b->tp_lo, b->tp_hi, b->model, vk, vg, 100 * (1 + p->margin), vt, window,
           s->resizable ? "" : " (only recommended: the workload cannot checkpoint)");
  c->act = s->resizable ? PIT_ACT_RESIZE : PIT_ACT_KEEP;
  return 1;
}

/* The node whose ranks compute longest (it makes the others wait); -1 without a split. */
static int slowest_node(const struct pit_policy_state *s) {
  int slow = -1;
  for (int i = 0; i < s->nnodes; i++)
    if (s->nodes[i].compute_s > 0 && (slow < 0 || s->nodes[i].compute_s > s->nodes[slow].compute_s))
      slow = i;
  return slow;
}

/* The paired rule (cost policy, before cur is steady): removing the node k
 * whose ranks compute longest, from a membership of R ranks with equal shares.
 * In every step the others then compute R/(R−r_k) times their share, so the
 * step's compute falls from max(c) ≥ c_k to R/(R−r_k)·max_{j≠k} c_j; with a
 * collective no longer on fewer ranks, the step time changes by at most
 * τ = max(R/(R−r_k)·u, 1), u the upper 95% bound of the paired ratio
 * max_{j≠k} c_j / c_k (the observer's others_hi: ranks compared within the
 * same steps, so a drifting pace cancels out). The rest then costs at most
 * (price after / price now)·τ of keeping, whatever the pace; the pace only
 * sizes the saving against the switch, at its 10th percentile so far (the
 * cautious end, as the ordinary rule's interval ends): keeping costs pk·rest·P,
 * removing at most pa·(rest·P·τ + switch), and the difference must exceed
 * margin × the switch at the higher price, as in the ordinary rule. Under a deadline the
 * rest at the pace's 90th percentile times τ, with two switches, must fit.
 * Its decision points: every PIT_POLICY_PAIRED_MIN steps once that many are
 * paired (a few steps of a clearly slower rank decide; noisy ones widen u
 * until more are seen).
 * Returns 1 (c set) when it removes the node. */
static int paired_remove(const struct pit_policy *p, const struct pit_policy_state *s, const struct pit_membership *mk,
                         struct pit_choice *c) {
  int ranks = 0, slow = slowest_node(s);
  for (int i = 0; i < s->cur.n; i++)
    ranks += s->cur.m[i].nodes * rpn_of(&s->cur.m[i]);
  if (p->kind != PIT_POLICY_COST || slow < 0 || s->nnodes < 2 || s->total_steps <= s->step ||
      s->nodes[slow].paired_n < PIT_POLICY_PAIRED_MIN || !(s->nodes[slow].others_hi > 0) ||
      !(s->pace_lo_s > 0) || s->since_change % PIT_POLICY_PAIRED_MIN != 0)
    return 0;
  const char *it = s->nodes[slow].itype;
  struct pit_membership m;
  struct pit_err e2 = {0};
  pit_membership_clear(&m);
  int rk = 0;
  for (int i = 0; i < s->cur.n; i++) {
    int mine = strcmp(s->cur.m[i].itype, it) == 0;
    rk += mine ? rpn_of(&s->cur.m[i]) : 0;
    if (s->cur.m[i].nodes - mine > 0)
      pit_membership_add(&m, s->cur.m[i].itype, s->cur.m[i].nodes - mine, s->cur.m[i].ranks_per_node, &e2);
  }
  if (!m.n || rk <= 0 || rk >= ranks || !in_bounds(s, &m) || on_markets(s, mk, &m, &m) < 0)
    return 0;
  double pk = pit_policy_price_h(s, mk), pa = pit_policy_price_h(s, &m);
  if (!(pk > 0) || !(pa >= 0))
    return 0;
  double u = s->nodes[slow].others_hi, tau = fmax((double)ranks / (ranks - rk) * u, 1.0), kappa = pa / pk * tau;
  const char *src;
  double rest = (double)(s->total_steps - s->step), sw = change_seconds(s, mk, &m, &src);
  double sw_cost = sw / 3600.0 * fmax(pk, pa);
  /* keeping at pace P costs pk·rest·P; removing at most pa·(rest·P·τ + switch): the saving grows with P,
   * so it is taken at the pace's cautious (low) end */
  double save = ((pk - pa * tau) * rest * s->pace_lo_s - pa * sw) / 3600.0; /* forecast: a bound, not billing */
  if (!(save > p->margin * sw_cost))
    return 0;
  const char *back_src;
  if (!isnan(p->deadline_s) && s->t + rest * s->pace_hi_s * tau + sw + switch_seconds(s, &back_src) > p->deadline_s)
    return 0; /* the way back, should it be wanted, is a relaunch */
  char cur[PIT_MEMBERSHIP_TEXT_MAX], to[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(mk, cur, sizeof cur);
  pit_membership_format(&m, to, sizeof to);
  struct pit_policy_alt *k = &c->alts[0], *a = &c->alts[1];
  memset(k, 0, 2 * sizeof *k);
  k->m = *mk;
  snprintf(k->kind, sizeof k->kind, "keep");
  snprintf(k->model, sizeof k->model, "pace so far (%lld steps)", (long long)s->since_change);
  k->tp = s->pace_s, k->tp_lo = s->pace_lo_s, k->tp_hi = s->pace_hi_s;
  a->m = m;
  snprintf(a->kind, sizeof a->kind, "remove");
  snprintf(a->model, sizeof a->model, "paired ratio bound (%lld steps)", (long long)s->nodes[slow].paired_n);
  a->tp = s->pace_s * tau, a->tp_lo = s->pace_lo_s * tau, a->tp_hi = s->pace_hi_s * tau;
  for (int i = 0; i < 2; i++) {
    struct pit_policy_alt *x = &c->alts[i];
    double w = i ? sw : 0, price = i ? pa : pk;
    x->switch_s = w;
    x->switch_src = i ? src : "kept";
    x->rest_s = rest * x->tp + w, x->rest_lo = rest * x->tp_lo + w, x->rest_hi = rest * x->tp_hi + w;
    x->cost = price / 3600.0 * x->rest_s, x->cost_hi = price / 3600.0 * x->rest_hi; /* forecast */
    x->feasible = isnan(p->deadline_s) || s->t + x->rest_hi <= p->deadline_s;
  }
  c->nalts = 2;
  c->decided = 1;
  c->to = m;
  snprintf(c->kind, sizeof c->kind, "remove");
  snprintf(c->reason, sizeof c->reason,
           "remove → %s (paired, from %s): in %lld steps the other ranks computed at most %.3g× what %s's did "
           "(95%% bound, same steps), so the rest costs at most %.3g× keeping's whatever the pace; at least $%.5f "
           "saved over the switch ($%.5f, %.1f s %s)%s",
           to, cur, (long long)s->nodes[slow].paired_n, u, it, kappa, save, sw_cost, sw, src,
           s->resizable ? "" : " (only recommended: the workload cannot checkpoint)");
  c->act = s->resizable ? PIT_ACT_RESIZE : PIT_ACT_KEEP;
  return 1;
}

/* A decision point, once cur is measured steady: every `every` iterations on
 * it since the change; and before the first of those, every
 * PIT_POLICY_EARLY_STEPS (the observer's steadiness check: the first point is
 * as soon as the pace is known, not a fixed `every` iterations later). */
int pit_policy_decision_point(int64_t since_change, int64_t every) {
  if (since_change < PIT_POLICY_EARLY_STEPS)
    return 0;
  if (since_change < every)
    return since_change % PIT_POLICY_EARLY_STEPS == 0;
  return since_change % every == 0;
}

/* The moves weighed beside keep (step 1 of pit_policy_decide_cost): one node
 * of a type added, one removed (first of the type whose rank computes longest),
 * every node switched to one type, back to a measured membership, several added
 * (up to --nnodes' MAX) or removed at once. Returns the node whose rank computes
 * longest (-1: none known). */
static int add_moves(struct ctx *x, const struct pit_policy_state *s, struct pit_choice *c) {
  int rpn = s->cur.n ? s->cur.m[0].ranks_per_node : -1;
  struct pit_err e2 = {0};
  for (int k = 0; k < s->ntypes; k++) { /* add one node of a type */
    struct pit_membership m = s->cur;
    if (pit_membership_add(&m, s->types[k].itype, 1, rpn, &e2) == 0)
      add_alt(x, c, &m, "add");
  }
  /* remove one node: first of the type whose rank computes longest (it makes the others wait) */
  int slow = slowest_node(s);
  for (int k = -1; k < s->cur.n; k++) {
    const char *it = k < 0 ? (slow >= 0 ? s->nodes[slow].itype : NULL) : s->cur.m[k].itype;
    if (!it)
      continue;
    struct pit_membership m;
    pit_membership_clear(&m);
    for (int i = 0; i < s->cur.n; i++) {
      int nn = s->cur.m[i].nodes - (strcmp(s->cur.m[i].itype, it) == 0);
      if (nn > 0)
        pit_membership_add(&m, s->cur.m[i].itype, nn, s->cur.m[i].ranks_per_node, &e2);
    }
    if (m.n)
      add_alt(x, c, &m, "remove");
  }
  int ncur = pit_membership_nodes(&s->cur);
  for (int k = 0; k < s->ntypes; k++) { /* switch every node to one type */
    struct pit_membership m;
    pit_membership_clear(&m);
    if (pit_membership_add(&m, s->types[k].itype, ncur, rpn, &e2) == 0)
      add_alt(x, c, &m, "switch");
  }
  for (int i = 0; i < s->nmeas; i++) /* back to any measured membership */
    add_alt(x, c, &s->meas[i].m, "switch");
  /* add several nodes of a type at once, up to the bound (--nnodes: without one, not weighed) */
  for (int k = 0; k < s->ntypes && s->nmax > 0; k++)
    for (int more = 2; more <= s->nmax - ncur; more++) {
      struct pit_membership m = s->cur;
      if (pit_membership_add(&m, s->types[k].itype, more, rpn, &e2) == 0)
        add_alt(x, c, &m, "add");
    }
  for (int k = 0; k < s->cur.n; k++) /* remove several nodes of a type at once: down to 1 of it */
    for (int keepn = s->cur.m[k].nodes - 2; keepn >= 1; keepn--) {
      struct pit_membership m;
      pit_membership_clear(&m);
      for (int i = 0; i < s->cur.n; i++)
        pit_membership_add(&m, s->cur.m[i].itype, i == k ? keepn : s->cur.m[i].nodes, s->cur.m[i].ranks_per_node,
                           &e2);
      add_alt(x, c, &m, "remove");
    }
  return slow;
}

int pit_policy_decide_cost(const struct pit_policy *p, const struct pit_policy_state *given, struct pit_choice *c,
                           struct pit_err *e) {
  (void)e;
  /* the policy weighs types: its state with the memberships bare; the markets (given->cur's) only price and
   * name the alternatives (on_markets) */
  struct pit_policy_state bare = *given;
  const struct pit_policy_state *s = &bare;
  pit_membership_bare(&given->cur, &bare.cur);
  for (int i = 0; i < bare.nmeas; i++)
    pit_membership_bare(&given->meas[i].m, &bare.meas[i].m);
  char cur[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&given->cur, cur, sizeof cur);
  const struct pit_policy_meas *qc = find_meas(s, &s->cur);
  int64_t every = p->every > 0 ? p->every : 50;
  if (s->at_start && !qc) {
    snprintf(c->reason, sizeof c->reason, "start on %s: no earlier run measured it (measured from its first steps)",
             cur);
    return 0;
  }
  if (!s->at_start && !s->steady && paired_remove(p, s, &given->cur, c))
    return 0;
  if (!s->at_start && (!s->steady || !qc || !pit_policy_decision_point(s->since_change, every))) {
    snprintf(c->reason, sizeof c->reason, "measuring %s", cur);
    return 0;
  }
  c->decided = 1;
  /* at the start a change costs nothing, so with neither deadline nor budget the cheaper per step is the
   * cheaper job whatever its length: an unknown length is weighed over PIT_POLICY_START_STEPS (the
   * figures the reason prints) */
  int per_step = s->at_start && s->total_steps <= 0 && isnan(p->deadline_s) && isnan(p->budget);
  if (!per_step && (s->total_steps <= 0 || s->step >= s->total_steps)) {
    snprintf(c->reason, sizeof c->reason, s->total_steps <= 0 ? "keep %s: the job's length is unknown, so no saving "
                                                                "can be weighed"
                                                              : "keep %s: every step is done",
             cur);
    c->decided = !s->at_start; /* at the start nothing was weighed: no decision to record */
    return 0;
  }
  const char *sw_src;
  int64_t rest = per_step ? PIT_POLICY_START_STEPS : s->total_steps - s->step;
  struct ctx x = {p, s, &given->cur, rest, qc->tp, qc->tp_half > 0 ? qc->tp_half : 0, switch_seconds(s, &sw_src)};
  /* 1. the alternatives */
  add_alt(&x, c, &s->cur, "keep");
  if (c->nalts == 0) {
    snprintf(c->reason, sizeof c->reason,
             "keep %s: its price is not in the catalog (a type missing, or on spot without a spot price)", cur);
    return 0;
  }
  int slow = add_moves(&x, s, c);

  /* 2. the best: among feasible ones by the cautious (high) objective; with
   * nothing meeting the deadline, the fastest */
  const struct pit_policy_alt *keep = &c->alts[0];
  int any_feasible = 0;
  for (int i = 0; i < c->nalts; i++)
    any_feasible |= c->alts[i].feasible;
  int best = -1, tight = -1; /* tight: the nearest left out for the deadline or the budget */
  for (int i = 1; i < c->nalts; i++) {
    const struct pit_policy_alt *a = &c->alts[i];
    if (any_feasible && !a->feasible) {
      if (tight < 0 || a->rest_s < c->alts[tight].rest_s)
        tight = i;
      continue;
    }
    /* while the kept membership meets the deadline, leave it only for one that meets it at its high end
     * with one more switch to spare: a move for cost that the noise or the model's error would undo
     * (at the price of a switch back) is not taken */
    if (keep->feasible && !isnan(p->deadline_s) && s->t + a->rest_hi + x.sw > p->deadline_s) {
      if (tight < 0 || a->rest_s < c->alts[tight].rest_s)
        tight = i;
      continue;
    }
    double v = any_feasible ? obj(&x, a, 1) : a->rest_hi;
    double w = best < 0 ? INFINITY : any_feasible ? obj(&x, &c->alts[best], 1) : c->alts[best].rest_hi;
    if (v < w)
      best = i;
  }
  char vk[32], vb[32], vs[32];
  fmt_obj(&x, obj(&x, keep, 0), vk, sizeof vk);
  if (best < 0 && tight >= 0) { /* alternatives there were, but none within the deadline or budget (a run grown
                                    for its deadline said "none can be predicted" while it had measured the one) */
    const struct pit_policy_alt *a = &c->alts[tight];
    char tt[PIT_MEMBERSHIP_TEXT_MAX], lim[160];
    pit_membership_format(&a->m, tt, sizeof tt);
    if (!a->feasible && !isnan(p->deadline_s) && s->t + a->rest_s > p->deadline_s)
      snprintf(lim, sizeof lim, "%.1f s so far + %.1f s for the rest > the deadline %.1f s", s->t, a->rest_s,
               p->deadline_s);
    else if (!a->feasible)
      snprintf(lim, sizeof lim, "over the budget");
    else
      snprintf(lim, sizeof lim, "%.1f s so far + %.1f s for the rest at its interval's high end + %.1f s for a "
               "switch back > the deadline %.1f s", s->t, a->rest_hi, x.sw, p->deadline_s);
    snprintf(c->reason, sizeof c->reason,
             "keep %s (%s for the rest): no other membership fits with certainty (the nearest, %s → %s: %s)", cur, vk,
             a->kind, tt, lim);
    return 0;
  }
  if (best < 0) {
    snprintf(c->reason, sizeof c->reason, "keep %s (%s for the rest): no other membership can be predicted", cur,
             vk);
    return 0;
  }
  const struct pit_policy_alt *b = &c->alts[best];
  char to[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&b->m, to, sizeof to);
  double sw_obj =
      p->kind == PIT_POLICY_COST
          ? b->switch_s / 3600.0 * fmax(pit_policy_price_h(s, &given->cur), pit_policy_price_h(s, &b->m))
          : b->switch_s;
  /* cautious saving: keep at its low end against the candidate at its high end (switch included) */
  double save;
  const char *why;
  if (!keep->feasible && b->feasible) {
    save = INFINITY;
    why = isnan(p->deadline_s) || s->t + keep->rest_s <= p->deadline_s ? "the budget no longer holds on"
                                                                        : "the deadline no longer holds on";
  } else if (!any_feasible && p->kind == PIT_POLICY_COST) {
    save = keep->rest_lo - b->rest_hi;
    sw_obj = b->switch_s;
    why = "no membership meets the deadline; the fastest is wanted instead of";
  } else {
    save = obj(&x, keep, -1) - obj(&x, b, 1);
    why = NULL;
  }
  fmt_obj(&x, obj(&x, b, 0), vb, sizeof vb);
  fmt_obj(&x, sw_obj, vs, sizeof vs);
  /* the candidate's high end already carries one switch: it must save margin × switch more */
  if (!(save > p->margin * sw_obj) && keep->feasible && try_split(&x, c, every))
    return 0;
  if (!(save > p->margin * sw_obj)) {
    snprintf(c->reason, sizeof c->reason,
             "keep %s (%s for the rest, %s): the best alternative, %s → %s (%s, %s), does not save more than "
             "%.0f%% over the switch (%s, %.1f s %s) at the ends of their intervals",
             cur, vk, keep->feasible ? "fits" : "does not fit", b->kind, to, vb, b->model, 100 * (1 + p->margin), vs,
             b->switch_s, b->switch_src);
    return 0;
  }
  c->to = b->m;
  snprintf(c->kind, sizeof c->kind, "%s", b->kind);
  char sv[32];
  fmt_obj(&x, save + sw_obj, sv, sizeof sv);
  int w = 0;
  if (why)
    w = snprintf(c->reason, sizeof c->reason, "%s %s: %s → %s, predicted %s [%.1f, %.1f s] (%s)", why, cur, b->kind,
                 to, vb, b->rest_lo, b->rest_hi, b->model);
  else
    w = snprintf(c->reason, sizeof c->reason,
                 "%s → %s: the rest predicted %s against %s kept (t_p %.4g s [%.4g, %.4g], %s); cautious saving %s "
                 "> %.0f%% of the switch %s (%.1f s %s)",
                 b->kind, to, vb, vk, b->tp, b->tp_lo, b->tp_hi, b->model, sv, 100 * (1 + p->margin), vs, b->switch_s,
                 b->switch_src);
  if (slow >= 0 && strcmp(b->kind, "remove") == 0 && w > 0 && (size_t)w < sizeof c->reason)
    snprintf(c->reason + w, sizeof c->reason - (size_t)w, "; %s's rank computes %.4g s of a %.4g s step",
             s->nodes[slow].itype, s->nodes[slow].compute_s, x.tp_cur);
  if (!s->resizable) {
    size_t l = strlen(c->reason);
    snprintf(c->reason + l, sizeof c->reason - l, " (only recommended: the workload cannot checkpoint)");
    return 0;
  }
  c->act = PIT_ACT_RESIZE;
  return 0;
}

/* bench/spot-scale/oracle.c — the Bayes oracle and the model's world (oracle.h).
 *
 * The DP, backward over ticks t = D-1 .. 0 (D deadline ticks, H work ticks, r
 * restart ticks, ps/po a tick's price on spot/on-demand), over the states a
 * decision sees: w work done (the band H - (D - t) <= w <= min(t, H - 1)), the
 * instance held (idle; spot or on-demand with o = 0..r restart ticks left), the
 * availability a of tick t and how long it has lasted, j (1..ORACLE_AGE). A
 * choice (idle, spot when a, on-demand) pays its tick, passes a restart tick or
 * does a tick of work, and the next tick's availability stays (age j + 1) with
 * p[a][j], else turns (age 1); spot held when it turns is reclaimed (idle).
 * V = 0 once w = H; at t = D with w < H, infinite. The choices allowed are the
 * safety rules (pit_sim_optimum_safe; S the slack in ticks, S - o after the
 * restart): spot kept while S - o >= r, started from idle when S >= 2r, from
 * on-demand when S - o >= 2r; idle when S - 1 >= r. The choice of least
 * expected cost is kept per state (one byte) and the case then simulated
 * forward with pit_sim_run's rules, reading it. When every tick's choices (D ×
 * band × states × 2 × (ORACLE_AGE + 1) bytes) do not fit in the memory given, a
 * first backward pass keeps the values of every K-th tick (K about sqrt(D × 8)),
 * and the forward run recomputes the choices of one segment of K ticks at a time
 * from the values at its end: the same choices, twice the work, memory two layers
 * of values + D / K kept bands + K ticks of choices. The rows of a tick are solved
 * in parallel (OpenMP).
 * Invariants: the oracle never misses (the rules keep on-demand able to finish);
 * the choices do not depend on K (the same arithmetic from the same values).
 */
#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* completed spans of each kind (the first and the last are cut by the trace's ends) */
static int spans(const struct pit_trace *t, int **up, int *nup, int **dn, int *ndn) {
  *up = malloc((size_t)t->n * sizeof **up);
  *dn = malloc((size_t)t->n * sizeof **dn);
  *nup = *ndn = 0;
  if (!*up || !*dn) {
    free(*up);
    free(*dn);
    return -1;
  }
  int s0 = 0, first = 1;
  for (int i = 1; i < t->n; i++)
    if ((t->count[i] > 0) != (t->count[i - 1] > 0)) {
      if (!first) {
        if (t->count[i - 1] > 0)
          (*up)[(*nup)++] = i - s0;
        else
          (*dn)[(*ndn)++] = i - s0;
      }
      first = 0;
      s0 = i;
    }
  return 0;
}

static int cmp_int(const void *x, const void *y) { return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y); }

/* p[a][b][1..ORACLE_AGE] from the spans of kind a whose previous span of kind a is in bucket b
 * (nb 1: every span) */
static void fit_kind(struct oracle_model *m, int a, const int *v, int n) {
  for (int b = 0; b < m->nb; b++) {
    double prev = 0.5;
    for (int j = 1; j <= ORACLE_AGE; j++) {
      double reach = 0, more = 0, res = 0;
      for (int i = m->nb > 1; i < n; i++)
        if ((m->nb == 1 || (v[i - 1] >= m->th[a]) == b) && v[i] >= j) {
          reach++;
          more += v[i] > j;
          res += v[i] - j;
        }
      double p = prev; /* no span that long: as the age before */
      if (reach > 0)
        p = j < ORACLE_AGE ? more / reach : (res / reach) / (res / reach + 1);
      m->p[a][b][j] = prev = p;
    }
    m->p[a][b][0] = m->p[a][b][1];
  }
}

int oracle_fit(struct oracle_model *m, const struct pit_trace *t, int prev_bucket) {
  int *v[2], n[2];
  if (spans(t, &v[1], &n[1], &v[0], &n[0]))
    return -1;
  int rc = n[0] && n[1] ? 0 : -1;
  m->nb = prev_bucket ? 2 : 1;
  for (int a = 0; a < 2 && !rc; a++) {
    int *sorted = malloc((size_t)n[a] * sizeof *sorted);
    if (!sorted) {
      rc = -1;
      break;
    }
    memcpy(sorted, v[a], (size_t)n[a] * sizeof *sorted);
    qsort(sorted, (size_t)n[a], sizeof *sorted, cmp_int);
    m->th[a] = sorted[n[a] / 2] < ORACLE_AGE ? sorted[n[a] / 2] : ORACLE_AGE; /* the median, seen within the ages */
    free(sorted);
    fit_kind(m, a, v[a], n[a]);
  }
  free(v[0]);
  free(v[1]);
  return rc;
}

static uint64_t next(uint64_t *s) { /* xorshift64 */
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

int oracle_synth(struct pit_trace *t, uint64_t seed) {
  int *up, *dn, nup, ndn;
  if (spans(t, &up, &nup, &dn, &ndn))
    return -1;
  int rc = nup && ndn ? 0 : 1;
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  int cur = (int)(next(&s) & 1);
  for (int i = 0; i < t->n && !rc; cur = !cur) {
    int len = cur ? up[next(&s) % (uint64_t)nup] : dn[next(&s) % (uint64_t)ndn];
    for (int k = 0; k < len && i < t->n; k++)
      t->count[i++] = cur;
  }
  free(up);
  free(dn);
  return rc;
}

/* a state's place in a work row: instance st, availability a, the buckets of the last
 * completed span of availability (bu) and of absence (bd), age j */
#define IX(nb, st, a, bu, bd, j)                                                                              \
  (((((size_t)(st) * 2 + (size_t)(a)) * (size_t)(nb) + (size_t)(bu)) * (size_t)(nb) + (size_t)(bd)) *          \
       (ORACLE_AGE + 1) +                                                                                      \
   (size_t)(j))

/* Tick t's availability: its age (up to ORACLE_AGE) and, with nb 2, the buckets of the last
 * completed span of each kind before it (the trace read backward, wrapped; 0 when not seen). */
static void history(const struct pit_sim_case *c, const struct oracle_model *m, int t, int *age, int *bu, int *bd) {
  int a = pit_sim_avail(c, t), n = c->trace->n, k = 1;
  while (k < n && pit_sim_avail(c, t - k) == a)
    k++;
  *age = k < ORACLE_AGE ? k : ORACLE_AGE;
  *bu = *bd = 0;
  if (m->nb < 2)
    return;
  int k2 = k, k3;
  while (k2 < n && pit_sim_avail(c, t - k2) != a)
    k2++;
  for (k3 = k2; k3 < n && pit_sim_avail(c, t - k3) == a;)
    k3++;
  int other = k2 - k >= m->th[!a] && k2 < n, same = k3 - k2 >= m->th[a] && k3 < n; /* complete spans only */
  *bu = a ? same : other;
  *bd = a ? other : same;
}

struct dp {
  int D, H, r, ns, bw; /* ns states of the instance: 0 idle, 1 + o spot, r + 2 + o on-demand */
  size_t row;          /* values (or choices) per work row: ns × 2 × nb² × (ORACLE_AGE + 1) */
  const struct oracle_model *m;
  double ps, po;
};

static int lo_of(const struct dp *d, int t) { return d->H - (d->D - t) > 0 ? d->H - (d->D - t) : 0; }
static int hi_of(const struct dp *d, int t) { return t < d->H - 1 ? t : d->H - 1; }

/* One tick t backward: cur (values indexed by absolute work row) from nx (tick t + 1's);
 * the choices of tick t into ch (indexed by the row's place in the band), unless NULL. */
static void tick(const struct dp *d, int t, const double *nx, double *cur, unsigned char *ch) {
  int H = d->H, r = d->r, ns = d->ns, lo = lo_of(d, t), hi = hi_of(d, t), nb = d->m->nb;
  size_t row = d->row;
#define V(arr, w, st, a, bu, bd, j) arr[(size_t)(w) * row + IX(nb, st, a, bu, bd, j)]
  if (lo > 0) /* just below the band: infeasible (read from t - 1); rows further down are never read */
    for (size_t i = 0; i < row; i++)
      cur[(size_t)(lo - 1) * row + i] = INFINITY;
#pragma omp parallel for schedule(static)
  for (int w = lo; w <= hi; w++) {
    int S = (d->D - t) - (H - w);
    for (int st = 0; st < ns; st++) {
      int spot = st >= 1 && st <= r + 1, od = st >= r + 2, o = spot ? st - 1 : od ? st - r - 2 : 0;
      for (int a = 0; a < 2; a++) {
        if (spot && !a)
          continue; /* spot gone at the tick is reclaimed before the choice */
        for (int bu = 0; bu < nb; bu++)
        for (int bd = 0; bd < nb; bd++)
        for (int j = 1; j <= ORACLE_AGE; j++) {
          double stay = d->m->p[a][a ? bu : bd][j], best = INFINITY;
          int jn = j < ORACLE_AGE ? j + 1 : ORACLE_AGE, pick = PIT_SPOT_OD;
          int ended = nb > 1 && j >= d->m->th[a]; /* the bucket of this span if it ends now */
          int bu2 = a ? ended : bu, bd2 = a ? bd : ended;
          for (int c = PIT_SPOT_IDLE; c <= PIT_SPOT_OD; c++) {
            int ok = c == PIT_SPOT_OD || (c == PIT_SPOT_IDLE && S - 1 >= r) ||
                     (c == PIT_SPOT_SPOT && a && (spot ? S - o >= r : od ? S - o >= 2 * r : S >= 2 * r));
            if (!ok)
              continue;
            int keep = (c == PIT_SPOT_SPOT && spot) || (c == PIT_SPOT_OD && od);
            int o2 = c == PIT_SPOT_IDLE ? 0 : keep ? o : r, w2 = w;
            if (c != PIT_SPOT_IDLE) {
              if (o2 > 0)
                o2--;
              else
                w2++;
            }
            int st2 = c == PIT_SPOT_IDLE ? 0 : c == PIT_SPOT_SPOT ? 1 + o2 : r + 2 + o2;
            double v = c == PIT_SPOT_IDLE ? 0 : c == PIT_SPOT_SPOT ? d->ps : d->po;
            if (w2 < H) {
              double vs = stay > 0 ? V(nx, w2, st2, a, bu, bd, jn) : 0;
              double vt = stay < 1 ? V(nx, w2, c == PIT_SPOT_SPOT ? 0 : st2, !a, bu2, bd2, 1) : 0;
              v += stay * vs + (1 - stay) * vt;
            }
            if (v < best - 1e-12)
              best = v, pick = c;
          }
          V(cur, w, st, a, bu, bd, j) = best;
          if (ch)
            V(ch, w - lo, st, a, bu, bd, j) = (unsigned char)pick;
        }
      }
    }
  }
#undef V
}

/* The rows of tick T's values that tick T - 1 reads (rows >= H stay 0 and are not kept). */
static void kept_rows(const struct dp *d, int T, int *r0, int *r1) {
  *r0 = lo_of(d, T) > 0 ? lo_of(d, T) - 1 : 0;
  *r1 = hi_of(d, T);
}

/* The work of one run: the values' two layers, the checkpoints of tick K, 2K, ... (their
 * kept rows) and the choices of one segment of K ticks. */
struct run {
  struct dp d;
  int K, nck, seg;
  size_t layer, band;
  double *nx, *cur, *ck;
  unsigned char *ch;
};

static void terminal(struct run *u) { /* tick D's values: 0 once done, else infinite */
  for (size_t i = 0; i < (size_t)(u->d.H + 1) * u->d.row; i++)
    u->nx[i] = u->cur[i] = i >= (size_t)u->d.H * u->d.row ? 0 : INFINITY;
}

static void swap(struct run *u) {
  double *x = u->nx;
  u->nx = u->cur;
  u->cur = x;
}

/* The backward pass without choices, keeping tick kK's values for k = 1 .. nck. */
static void checkpoints(struct run *u) {
  terminal(u);
  for (int t = u->d.D - 1; t >= u->K; t--) {
    tick(&u->d, t, u->nx, u->cur, NULL);
    swap(u);
    if (t % u->K == 0) {
      int r0, r1;
      kept_rows(&u->d, t, &r0, &r1);
      memcpy(u->ck + (size_t)(t / u->K - 1) * u->band, u->nx + (size_t)r0 * u->d.row,
             (size_t)(r1 - r0 + 1) * u->d.row * sizeof *u->ck);
    }
  }
}

/* The choices of ticks [sK, min(sK + K, D)), recomputed from the values of the segment's end. */
static void segment(struct run *u, int s) {
  int t0 = s * u->K, t1 = t0 + u->K < u->d.D ? t0 + u->K : u->d.D;
  if (t1 == u->d.D)
    terminal(u);
  else {
    int r0, r1;
    kept_rows(&u->d, t1, &r0, &r1);
    memcpy(u->nx + (size_t)r0 * u->d.row, u->ck + (size_t)(t1 / u->K - 1) * u->band,
           (size_t)(r1 - r0 + 1) * u->d.row * sizeof *u->ck);
  }
  for (int t = t1 - 1; t >= t0; t--) {
    tick(&u->d, t, u->nx, u->cur, u->ch + (size_t)(t - t0) * (size_t)u->d.bw * u->d.row);
    swap(u);
  }
  u->seg = s;
}

int oracle_run(const struct pit_sim_case *c, const struct oracle_model *m, double max_cells, double max_bytes,
               double *cost, int *met, int *segments) {
  struct pit_sim_grid g;
  if (pit_sim_grid(c, &g, NULL))
    return -1;
  struct run u = {.d = {.D = (int)g.deadline, .H = (int)g.work, .r = (int)g.restart, .m = m}, .seg = -1};
  struct dp *d = &u.d;
  d->ns = 2 * d->r + 3;
  d->bw = d->D - d->H + 1;
  d->row = (size_t)d->ns * 2 * (size_t)(m->nb * m->nb) * (ORACLE_AGE + 1);
  if (d->bw < 1 || d->H < 1 || d->r < 1) /* no restart: not in the bench's grid */
    return 1;
  d->ps = c->spot_price_h * g.tick_h, d->po = c->price_h * g.tick_h; /* forecast: simulated clock */
  double tick_b = (double)d->bw * (double)d->row, layers_b = 2.0 * (d->H + 1) * (double)d->row * sizeof(double),
         band_b = (d->bw + 1.0) * (double)d->row * sizeof(double);
  if ((double)d->D * tick_b > max_cells)
    return 1;
  u.K = d->D; /* every tick's choices at once when they fit; else segments of about sqrt(D·band/tick) */
  if (layers_b + d->D * tick_b > max_bytes)
    u.K = (int)ceil(sqrt(d->D * band_b / tick_b));
  u.nck = (d->D - 1) / u.K;
  if (layers_b + u.nck * band_b + u.K * tick_b > max_bytes)
    return 1;
  u.layer = (size_t)(d->H + 1) * d->row;
  u.band = (size_t)(d->bw + 1) * d->row;
  u.nx = malloc(u.layer * sizeof *u.nx);
  u.cur = malloc(u.layer * sizeof *u.cur);
  u.ck = u.nck ? malloc((size_t)u.nck * u.band * sizeof *u.ck) : NULL;
  u.ch = malloc((size_t)u.K * (size_t)d->bw * d->row);
  int rc = 0;
  if (!u.nx || !u.cur || (u.nck && !u.ck) || !u.ch)
    rc = -1;
  else if (u.nck)
    checkpoints(&u);
  /* forward, pit_sim_run's rules */
  int mode = PIT_SPOT_IDLE, ovl = 0, done = 0, t;
  int limit = d->D + d->H + d->r + 1;
  *cost = 0;
  for (t = 0; !rc && t < limit && done < d->H; t++) {
    int avail = pit_sim_avail(c, t), age, bu, bd;
    history(c, m, t, &age, &bu, &bd);
    if (mode == PIT_SPOT_SPOT && !avail)
      mode = PIT_SPOT_IDLE, ovl = 0;
    int ch = PIT_SPOT_OD; /* past the deadline: on-demand */
    if (t < d->D && done >= lo_of(d, t)) {
      int st = mode == PIT_SPOT_IDLE ? 0 : mode == PIT_SPOT_SPOT ? 1 + ovl : d->r + 2 + ovl;
      if (t / u.K != u.seg)
        segment(&u, t / u.K);
      ch = u.ch[((size_t)(t % u.K) * (size_t)d->bw + (size_t)(done - lo_of(d, t))) * d->row +
                IX(m->nb, st, avail, bu, bd, age)];
    } else if (mode != PIT_SPOT_IDLE)
      ch = mode;
    if (ch != mode)
      mode = ch, ovl = ch == PIT_SPOT_IDLE ? 0 : (int)g.restart;
    if (mode != PIT_SPOT_IDLE) {
      *cost += mode == PIT_SPOT_SPOT ? d->ps : d->po;
      if (ovl > 0)
        ovl--;
      else
        done++;
    }
  }
  *met = done >= d->H && t <= d->D;
  *segments = (d->D + u.K - 1) / u.K;
  free(u.nx);
  free(u.cur);
  free(u.ck);
  free(u.ch);
  return rc;
}

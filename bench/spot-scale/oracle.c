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
 * forward with pit_sim_run's rules, reading it.
 * Invariants: the oracle never misses (the rules keep on-demand able to finish);
 * memory is the choices (D × band × states × 2 × ORACLE_AGE bytes) and two
 * layers of values.
 */
#include "oracle.h"

#include <math.h>
#include <stdlib.h>

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

int oracle_fit(struct oracle_model *m, const struct pit_trace *t) {
  int *v[2], n[2];
  if (spans(t, &v[1], &n[1], &v[0], &n[0]))
    return -1;
  int rc = n[0] && n[1] ? 0 : -1;
  for (int a = 0; a < 2 && !rc; a++) {
    double prev = 0.5;
    for (int j = 1; j <= ORACLE_AGE; j++) {
      double reach = 0, more = 0, res = 0;
      for (int i = 0; i < n[a]; i++)
        if (v[a][i] >= j) {
          reach++;
          more += v[a][i] > j;
          res += v[a][i] - j;
        }
      double p = prev; /* no span that long: as the age before */
      if (reach > 0)
        p = j < ORACLE_AGE ? more / reach : (res / reach) / (res / reach + 1);
      m->p[a][j] = prev = p;
    }
    m->p[a][0] = m->p[a][1];
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

struct dp {
  int D, H, r, ns, bw; /* ns states of the instance: 0 idle, 1 + o spot, r + 2 + o on-demand */
  unsigned char *choice;
};

static int lo_of(const struct dp *d, int t) { return d->H - (d->D - t) > 0 ? d->H - (d->D - t) : 0; }

static size_t at(const struct dp *d, int t, int w, int st, int a, int j) {
  return ((((size_t)t * (size_t)d->bw + (size_t)(w - lo_of(d, t))) * (size_t)d->ns + (size_t)st) * 2 + (size_t)a) *
             (ORACLE_AGE + 1) +
         (size_t)j;
}

static int solve(struct dp *d, const struct oracle_model *m, double ps, double po) {
  int D = d->D, H = d->H, r = d->r, ns = d->ns;
  size_t layer = (size_t)(H + 1) * (size_t)ns * 2 * (ORACLE_AGE + 1);
  double *next_v = malloc(layer * sizeof *next_v), *cur = malloc(layer * sizeof *cur);
  if (!next_v || !cur) {
    free(next_v);
    free(cur);
    return -1;
  }
#define V(arr, w, st, a, j) arr[((((size_t)(w)) * (size_t)ns + (size_t)(st)) * 2 + (size_t)(a)) * (ORACLE_AGE + 1) + (size_t)(j)]
  size_t row = (size_t)ns * 2 * (ORACLE_AGE + 1);
  for (size_t i = 0; i < layer; i++)
    next_v[i] = cur[i] = i >= (size_t)H * row ? 0 : INFINITY; /* w = H: done */
  for (int t = D - 1; t >= 0; t--) {
    int lo = lo_of(d, t), hi = t < H - 1 ? t : H - 1;
    if (lo > 0) /* just below the band: infeasible (read from t - 1); rows further down are never read */
      for (size_t i = 0; i < row; i++)
        cur[(size_t)(lo - 1) * row + i] = INFINITY;
    for (int w = lo; w <= hi; w++) {
      int S = (D - t) - (H - w);
      for (int st = 0; st < ns; st++) {
        int spot = st >= 1 && st <= r + 1, od = st >= r + 2, o = spot ? st - 1 : od ? st - r - 2 : 0;
        for (int a = 0; a < 2; a++) {
          if (spot && !a)
            continue; /* spot gone at the tick is reclaimed before the choice */
          for (int j = 1; j <= ORACLE_AGE; j++) {
            double stay = m->p[a][j], best = INFINITY;
            int jn = j < ORACLE_AGE ? j + 1 : ORACLE_AGE, pick = PIT_SPOT_OD;
            for (int c = PIT_SPOT_IDLE; c <= PIT_SPOT_OD; c++) {
              int ok = c == PIT_SPOT_OD ||
                       (c == PIT_SPOT_IDLE && S - 1 >= r) ||
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
              double v = c == PIT_SPOT_IDLE ? 0 : c == PIT_SPOT_SPOT ? ps : po;
              if (w2 < H) {
                double vs = stay > 0 ? V(next_v, w2, st2, a, jn) : 0;
                double vt = stay < 1 ? V(next_v, w2, c == PIT_SPOT_SPOT ? 0 : st2, !a, 1) : 0;
                v += stay * vs + (1 - stay) * vt;
              }
              if (v < best - 1e-12)
                best = v, pick = c;
            }
            V(cur, w, st, a, j) = best;
            d->choice[at(d, t, w, st, a, j)] = (unsigned char)pick;
          }
        }
      }
    }
    double *x = next_v;
    next_v = cur;
    cur = x;
  }
#undef V
  free(next_v);
  free(cur);
  return 0;
}

int oracle_run(const struct pit_sim_case *c, const struct oracle_model *m, double max_bytes, double *cost,
               int *met) {
  struct pit_sim_grid g;
  if (pit_sim_grid(c, &g, NULL))
    return -1;
  struct dp d = {.D = (int)g.deadline, .H = (int)g.work, .r = (int)g.restart};
  d.ns = 2 * d.r + 3;
  d.bw = d.D - d.H + 1;
  if (d.bw < 1 || d.H < 1 || d.r < 1) /* no restart: not in the bench's grid */
    return 1;
  double bytes = (double)d.D * d.bw * d.ns * 2 * (ORACLE_AGE + 1);
  if (bytes > max_bytes)
    return 1;
  d.choice = malloc((size_t)bytes);
  double ps = c->spot_price_h * g.tick_h, po = c->price_h * g.tick_h; /* forecast: simulated clock */
  if (!d.choice || solve(&d, m, ps, po)) {
    free(d.choice);
    return -1;
  }
  /* forward, pit_sim_run's rules */
  int mode = PIT_SPOT_IDLE, ovl = 0, done = 0, t;
  int limit = d.D + d.H + d.r + 1;
  *cost = 0;
  for (t = 0; t < limit && done < d.H; t++) {
    int avail = pit_sim_avail(c, t), age = 1;
    while (age < ORACLE_AGE && pit_sim_avail(c, t - age) == avail)
      age++;
    if (mode == PIT_SPOT_SPOT && !avail)
      mode = PIT_SPOT_IDLE, ovl = 0;
    int ch = PIT_SPOT_OD; /* past the deadline: on-demand */
    if (t < d.D && done >= lo_of(&d, t)) {
      int st = mode == PIT_SPOT_IDLE ? 0 : mode == PIT_SPOT_SPOT ? 1 + ovl : d.r + 2 + ovl;
      ch = d.choice[at(&d, t, done, st, avail, age)];
    } else if (mode != PIT_SPOT_IDLE)
      ch = mode;
    if (ch != mode)
      mode = ch, ovl = ch == PIT_SPOT_IDLE ? 0 : (int)g.restart;
    if (mode != PIT_SPOT_IDLE) {
      *cost += mode == PIT_SPOT_SPOT ? ps : po;
      if (ovl > 0)
        ovl--;
      else
        done++;
    }
  }
  *met = done >= d.H && t <= d.D;
  free(d.choice);
  return 0;
}

/* test_warmup.c — the warm-up pitstop reports and the drift: a known warm-up
 * of 50 slow steps followed by ±10% noise is found as 50 ± 10 (in each of 50
 * seeded trials); isolated spikes and a slow drift are not warm-up (MSER-5
 * cuts at them, shown beside); pit_drift measures a 20% drift. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "pitstop/analysis.h"

/* uniform in [1 - a, 1 + a] */
static double noise(double a) { return 1 + a * (2 * check_urand() - 1); }

#define N 3000

static void known_warmup(void) {
  static double x[N];
  int bad = 0;
  for (int trial = 0; trial < 50; trial++) {
    check_rng = 1000 + (uint64_t)trial;
    /* 50 slow steps, decaying from 3x to 1.3x, then ±10% noise around 1 */
    for (int i = 0; i < N; i++)
      x[i] = i < 50 ? (1.3 + 1.7 * (49 - i) / 49.0) * noise(0.1) : noise(0.1);
    size_t d;
    CHECK(pit_warmup(x, N, &d) == 0, "warmup");
    if (d < 40 || d > 60) {
      bad++;
      fprintf(stderr, "trial %d: warm-up %zu\n", trial, d);
    }
  }
  CHECK(bad == 0, "50 slow steps found as 50 +- 10 in every trial (%d failed)", bad);
}

static void spikes_and_drift(void) {
  static double x[N];
  check_rng = 7;
  /* ±10% noise with 200x spikes every 700 iterations (an OS hiccup, the
   * iterations after a validation): no warm-up */
  for (int i = 0; i < N; i++)
    x[i] = noise(0.1) * (i % 700 == 350 ? 200 : 1);
  size_t d;
  CHECK(pit_warmup(x, N, &d) == 0 && d == 0, "spikes are not warm-up: %zu", d);
  size_t dm = 0;
  CHECK(pit_mser(x, N, PIT_MSER_BATCH, &dm, NULL) == 0, "MSER-5 ran");
  CHECK(dm >= 350, "MSER-5 cuts at the first spike (%zu): why pitstop does not report it", dm);
  /* a level that drifts down 20% over the series (first iterations slower,
   * slowly): at most a few batches are called warm-up, never the drift */
  for (int i = 0; i < N; i++)
    x[i] = (1.2 - 0.2 * i / (double)N) * noise(0.1);
  CHECK(pit_warmup(x, N, &d) == 0 && d <= N / 2, "drift down: %zu", d);
  /* drifting up 20% (a GPU whose first iterations run faster): no warm-up;
   * the drift is measured: +20% over N iterations is 0.2/N/mean per iteration */
  for (int i = 0; i < N; i++)
    x[i] = (1.0 + 0.2 * i / (double)N) * noise(0.1);
  CHECK(pit_warmup(x, N, &d) == 0 && d == 0, "drift up is not warm-up: %zu", d);
  double dr;
  CHECK(pit_drift(x, N, &dr, NULL) == 0, "drift");
  CHECK_NEAR(dr * N, 0.2 / 1.1, 0.02, "relative drift over the series");
  for (int i = 0; i < N; i++)
    x[i] = noise(0.1);
  CHECK(pit_drift(x, N, &dr, NULL) == 0 && fabs(dr * N) < 0.02, "no drift: %g", dr * N);
  CHECK(pit_drift(x, 19, &dr, NULL) == 0 && isnan(dr), "too short for a drift");
  /* four batches of 5 with medians 1.0, 1.1, 0.95, 1.2 (at 2, 7, 12, 17): slope
   * and its standard error recomputed in Python — 0.0084706 per iteration over
   * the mean, se 0.0097356 plain, widened by t(2)/z = 4.302653/1.959964 to
   * 0.0213723 so that 2·se is a 95% half-width (2·plain se, 0.019, would call
   * this noise's slope a drift at 82%) */
  const double med[4] = {1.0, 1.1, 0.95, 1.2};
  for (int i = 0; i < 20; i++)
    x[i] = med[i / 5];
  double se;
  CHECK(pit_drift(x, 20, &dr, &se) == 0, "drift of 4 batches");
  CHECK_NEAR(dr, 0.0084706, 1e-6, "slope of 4 batch medians");
  CHECK_NEAR(se, 0.0213723, 1e-6, "its standard error, widened by t(2)/z");
  CHECK(pit_warmup(x, 19, &d) == 0 && d == 0, "too short for a warm-up");
}

int main(void) {
  known_warmup();
  spikes_and_drift();
  return check_done();
}

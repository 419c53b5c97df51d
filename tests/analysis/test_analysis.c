/* test_analysis.c — the statistics against known answers: type-7 quantiles
 * and descriptive stats computed by hand; Student t quantiles from tables;
 * MSER-5 finds an injected warm-up; the batch-means interval covers the true
 * mean of AR(1) series in most of 100 seeded trials (where the naive interval
 * does not); a series of records gives the expected steady state, PIT time,
 * slow rank and shares; configuration fields and keys. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/analysis.h"

/* xorshift64* and Box–Muller: a seeded normal generator for the tests. */
static double nrand(void) {
  double u = check_urand(), v = check_urand();
  if (u < 1e-300)
    u = 1e-300;
  return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void quantiles(void) {
  double x[10] = {7, 3, 10, 1, 5, 2, 9, 4, 8, 6}; /* 1..10 shuffled */
  struct pit_stats s;
  CHECK(pit_stats_compute(&s, x, 10) == 0, "stats");
  CHECK(s.n == 10 && s.sum == 55 && s.mean == 5.5 && s.min == 1 && s.max == 10, "basic");
  CHECK_NEAR(s.median, 5.5, 1e-12, "median");
  CHECK_NEAR(s.p5, 1.45, 1e-12, "p5: h = 9*0.05 = 0.45 -> 1 + 0.45");
  CHECK_NEAR(s.p95, 9.55, 1e-12, "p95: h = 8.55 -> 9 + 0.55");
  CHECK_NEAR(s.sd, sqrt(55.0 / 6.0), 1e-12, "sd = sqrt(82.5/9)");
  CHECK(x[0] == 7 && x[9] == 6, "input not modified");
  double y[4] = {3, NAN, 1, 2};
  CHECK(pit_stats_compute(&s, y, 4) == 0 && s.n == 3, "NaN skipped");
  CHECK_NEAR(s.median, 2, 1e-12, "median of 3");
  CHECK_NEAR(s.p5, 1.1, 1e-12, "p5 of 3: h = 0.1");
  CHECK_NEAR(s.p95, 2.9, 1e-12, "p95 of 3: h = 1.9");
  CHECK(pit_stats_compute(&s, y, 0) == 0 && s.n == 0 && isnan(s.mean) && isnan(s.sd), "empty");
  double one = 4.25;
  CHECK(pit_stats_compute(&s, &one, 1) == 0 && s.median == 4.25 && s.p95 == 4.25 && isnan(s.sd), "one value");
  double sorted[5] = {10, 20, 30, 40, 50};
  CHECK_NEAR(pit_quantile_sorted(sorted, 5, 0.3), 22, 1e-12, "q(0.3): h = 1.2 -> 20 + 0.2*10");
  CHECK(pit_quantile_sorted(sorted, 5, 0) == 10 && pit_quantile_sorted(sorted, 5, 1) == 50, "ends");
}

static void t_quantiles(void) {
  /* two-sided 95% critical values from standard tables */
  CHECK_NEAR(pit_t_quantile(0.975, 1), 12.706204736, 1e-6, "t(1)");
  CHECK_NEAR(pit_t_quantile(0.975, 2), 4.302652730, 1e-6, "t(2)");
  CHECK_NEAR(pit_t_quantile(0.975, 5), 2.570581836, 1e-6, "t(5)");
  CHECK_NEAR(pit_t_quantile(0.975, 19), 2.093024054, 1e-6, "t(19)");
  CHECK_NEAR(pit_t_quantile(0.975, 1000), 1.962339, 1e-5, "t(1000)");
  CHECK_NEAR(pit_t_quantile(0.025, 5), -2.570581836, 1e-6, "lower tail");
  CHECK_NEAR(pit_t_quantile(0.95, 10), 1.812461123, 1e-6, "t(0.95, 10)");
  CHECK(isnan(pit_t_quantile(0.975, 0)) && isnan(pit_t_quantile(1.5, 3)), "invalid");
}

/* pit_mser's drop count; the call itself must succeed. */
static size_t mser_drop(const double *x, size_t n, size_t m) {
  size_t d = 12345;
  struct pit_err e = {0};
  int rc = pit_mser(x, n, m, &d, &e);
  CHECK(rc == 0, "pit_mser: %s", e.msg);
  return d;
}

/* Out of memory is an error, never "no warm-up": a series too long to hold
 * its batch means (the allocation cannot be made) reports PIT_ENOMEM. The
 * data are never read before the allocation, so x may be short. */
static void mser_oom(void) {
  double x[8] = {0};
  size_t d = 7;
  struct pit_err e = {0};
  int rc = pit_mser(x, SIZE_MAX, 1, &d, &e);
  CHECK(rc == PIT_ENOMEM && e.code == PIT_ENOMEM, "out of memory reported: rc %d", rc);
  CHECK(strstr(e.msg, "out of memory") != NULL, "message: %s", e.msg);
  CHECK(d == 0, "no count on failure: %zu", d);
}

static void mser(void) {
  check_rng = 42;
  /* a step warm-up: 100 slow iterations, then 900 at 1.0 +- 0.02 */
  double x[1000];
  for (int i = 0; i < 1000; i++)
    x[i] = (i < 100 ? 1.5 : 1.0) + 0.02 * nrand();
  size_t d = mser_drop(x, 1000, PIT_MSER_BATCH);
  /* never less than the warm-up (any slow value left in inflates the error
   * hugely); noise may make it cut a little more */
  CHECK(d >= 100 && d <= 200, "step warm-up of 100 found: %zu", d);
  double m = 0;
  for (size_t i = d; i < 1000; i++)
    m += x[i];
  m /= (double)(1000 - d);
  CHECK_NEAR(m, 1.0, 0.003, "mean after the step warm-up");
  /* a decaying warm-up: 1 + 2 exp(-i/20): the truncated mean is steady */
  for (int i = 0; i < 1000; i++)
    x[i] = 1.0 + 2.0 * exp(-i / 20.0) + 0.02 * nrand();
  d = mser_drop(x, 1000, PIT_MSER_BATCH);
  m = 0;
  for (size_t i = d; i < 1000; i++)
    m += x[i];
  m /= (double)(1000 - d);
  CHECK(d >= 60 && d <= 250 && d % 5 == 0, "decay warm-up cut at %zu", d);
  CHECK_NEAR(m, 1.0, 0.005, "mean after truncation");
  /* never more than half; too short → 0 */
  for (int i = 0; i < 1000; i++)
    x[i] = 1000.0 - i; /* a trend: no steady state */
  CHECK(mser_drop(x, 1000, 5) <= 500, "at most half");
  CHECK(mser_drop(x, 19, 5) == 0, "fewer than 4 batches");
}

static void batch_means_ar1(void) {
  /* AR(1) iteration times: x_t = mu + phi (x_{t-1} - mu) + e_t, phi = 0.8:
   * strongly autocorrelated; the naive interval is ~3x too narrow. */
  const int trials = 100, n = 2000;
  const double mu = 0.01, phi = 0.8, sig = 0.001;
  double *x = malloc(sizeof(double) * n);
  int cover = 0, naive_cover = 0;
  check_rng = 7;
  for (int t = 0; t < trials; t++) {
    double v = mu + sig / sqrt(1 - phi * phi) * nrand(); /* stationary start */
    for (int i = 0; i < n; i++) {
      x[i] = v;
      v = mu + phi * (v - mu) + sig * nrand();
    }
    struct pit_interval ci;
    CHECK(pit_batch_means(x, n, &ci) == 0, "bm");
    if (t == 0)
      CHECK(ci.nbatches == 20 && ci.batch_size == 100 && ci.n == n, "20 batches of 100: %d x %lld", ci.nbatches,
            (long long)ci.batch_size);
    if (ci.lo <= mu && mu <= ci.hi)
      cover++;
    struct pit_stats s;
    pit_stats_compute(&s, x, n);
    double half = pit_t_quantile(0.975, n - 1) * s.sd / sqrt(n);
    if (fabs(s.mean - mu) <= half)
      naive_cover++;
  }
  free(x);
  printf("AR(1) phi=0.8, n=2000, 100 trials: batch-means interval covered %d, naive interval %d\n", cover,
         naive_cover);
  CHECK(cover >= 87 && cover <= 99, "batch-means coverage %d of 100 (nominal 95)", cover);
  CHECK(naive_cover <= 75, "the naive interval under-covers (%d of 100): the test can tell", naive_cover);
  /* small n */
  double y[6] = {1, 2, 3, 4, 5, 6};
  struct pit_interval ci;
  pit_batch_means(y, 6, &ci);
  /* 3 batches of 2: means 1.5, 3.5, 5.5; sd 2; half = t(0.975,2)*2/sqrt(3) */
  CHECK(ci.nbatches == 3 && ci.batch_size == 2, "small n batches");
  CHECK_NEAR(ci.mean, 3.5, 1e-12, "mean");
  CHECK_NEAR(ci.half, 4.302652730 * 2 / sqrt(3), 1e-6, "small-n half width");
  pit_batch_means(y, 3, &ci);
  CHECK(ci.mean == 2 && isnan(ci.lo) && ci.nbatches == 0, "fewer than 4: no interval");
}

static void config_fields(void) {
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_INIT;
  r.ranks = 4;
  r.config = strdup("{\"model\":\"dcgan\",\"batch_size\":128,\"threads\":2,\"instance_type\":\"c5.xlarge\","
                    "\"lr\":0.0002,\"data\":\"celeba\",\"nodes\":2}");
  struct pit_config c;
  pit_config_from_record(&c, &r);
  CHECK(strcmp(c.model, "dcgan") == 0 && c.batch == 128 && c.threads == 2 && c.ranks == 4 && c.nodes == 2 &&
            strcmp(c.itype, "c5.xlarge") == 0 && strcmp(c.data, "celeba") == 0,
        "fields");
  char key[256], v[64];
  pit_config_key(&c, key, sizeof key);
  CHECK(strcmp(key, "model=dcgan batch=128 ranks=4 nodes=2 itype=c5.xlarge threads=2") == 0, "key: %s", key);
  pit_config_field(&c, r.config, "lr", v, sizeof v);
  CHECK(strcmp(v, "0.0002") == 0, "any config key: %s", v);
  pit_config_field(&c, r.config, "nope", v, sizeof v);
  CHECK(strcmp(v, "-") == 0, "absent field");
  pit_config_field(&c, r.config, "batch", v, sizeof v);
  CHECK(strcmp(v, "128") == 0, "batch");
  pit_record_release(&r);
}

/* A run of 3 epochs × 20 iterations, 2 ranks (rank 1 computes 25% longer),
 * the first 10 iterations slow (warm-up), validation after each epoch. */
static void series_summary(void) {
  struct pit_series s;
  pit_series_init(&s);
  struct pit_record r;
  pit_record_init(&r);
  struct pit_err e = {0};
  r.type = PIT_REC_INIT;
  snprintf(r.run, sizeof r.run, "r1");
  r.t = 0;
  r.init_s = 2.0;
  r.ranks = 2;
  r.config = strdup("{\"model\":\"cnn\",\"batch\":64}");
  CHECK(pit_series_add(&s, &r, &e) == 0, "add init");
  check_rng = 99;
  double t = 2.0;
  int step = 0;
  for (int ep = 0; ep < 3; ep++) {
    for (int i = 0; i < 20; i++) {
      pit_record_release(&r);
      r.type = PIT_REC_ITER;
      snprintf(r.run, sizeof r.run, "r1");
      r.epoch = ep;
      r.iter = i;
      r.step = step;
      r.step_s = (step < 10 ? 0.05 : 0.01) + 1e-5 * nrand();
      t += r.step_s;
      r.t = t;
      pit_record_set_ranks(&r, 2);
      r.compute_s[0] = 0.008;
      r.compute_s[1] = 0.010;
      r.wait_s[0] = 0.002;
      r.wait_s[1] = 0.0;
      CHECK(pit_series_add(&s, &r, &e) == 0, "add iter");
      step++;
    }
    pit_record_release(&r);
    r.type = PIT_REC_VALIDATION;
    snprintf(r.run, sizeof r.run, "r1");
    r.val_s = 0.5;
    t += 0.5;
    r.t = t;
    pit_series_add(&s, &r, &e);
    pit_record_release(&r);
    r.type = PIT_REC_EPOCH;
    snprintf(r.run, sizeof r.run, "r1");
    r.epoch_s = 1.0;
    r.t = t;
    pit_series_add(&s, &r, &e);
  }
  pit_record_release(&r);
  r.type = PIT_REC_END;
  snprintf(r.run, sizeof r.run, "r1");
  r.total_s = 10.0;
  pit_series_add(&s, &r, &e);
  pit_record_release(&r);
  /* batch-share decisions: counted, the last kept; other decisions and bad details ignored */
  static const char *const dec[] = {
      "{\"what\":\"batch_shares\",\"step\":10,\"shares\":[40,24],\"previous\":[32,32]}",
      "{\"what\":\"resize\",\"shares\":[1,2]}", "{\"what\":\"batch_shares\",", "not json",
      "{\"what\":\"batch_shares\",\"step\":21,\"shares\":[43,21],\"previous\":[40,24]}"};
  for (size_t k = 0; k < sizeof dec / sizeof *dec; k++) {
    r.type = PIT_REC_DECISION;
    snprintf(r.run, sizeof r.run, "r1");
    r.detail = strdup(dec[k]);
    CHECK(pit_series_add(&s, &r, &e) == 0, "decision record: %s", e.msg);
    pit_record_release(&r);
  }

  struct pit_summary sm;
  CHECK(pit_series_summarize(&s, &sm, &e) == 0, "summarize: %s", e.msg);
  CHECK(sm.iters == 60 && sm.step.n == 60, "iters");
  CHECK(sm.non_paramount == 6, "epoch edges: %lld", (long long)sm.non_paramount);
  CHECK(sm.warmup >= 5 && sm.warmup <= 15 && sm.warmup % 5 == 0, "warm-up %lld", (long long)sm.warmup);
  CHECK_NEAR(sm.tp.mean, 0.01, 2e-5, "t_p");
  CHECK(sm.tp.lo <= 0.01 + 1e-5 && sm.tp.hi >= 0.01 - 1e-5 && sm.tp.half < 1e-4, "t_p interval [%g, %g]", sm.tp.lo,
        sm.tp.hi);
  CHECK(sm.tp.n == 60 - 6 - sm.warmup, "t_p sample size");
  CHECK(sm.nranks == 2 && sm.slow_rank == 1, "slow rank %d", sm.slow_rank);
  CHECK_NEAR(sm.slow_excess, 0.25, 1e-9, "rank 1 is 25% slower");
  CHECK_NEAR(sm.wait_share, 0.002 / 0.020, 1e-9, "wait share");
  CHECK(sm.rebalances == 2 && strcmp(sm.shares, "43/21") == 0, "batch shares: %d rebalances, last '%s'",
        sm.rebalances, sm.shares);
  CHECK_NEAR(sm.iters_per_epoch, 20, 0, "iters per epoch");
  CHECK(sm.validation.n == 3 && sm.epoch.n == 3 && sm.init.n == 1, "event counts");
  CHECK_NEAR(sm.total_s, 10.0, 0, "total from the end record");
  CHECK_NEAR(sm.init_share, 0.2, 1e-12, "init share");
  CHECK_NEAR(sm.epoch_share, 0.3, 1e-12, "epoch share");
  CHECK_NEAR(sm.validation_share, 0.15, 1e-12, "validation share");
  /* the flags: epoch edges and warm-up are marked */
  CHECK((s.it[0].flags & PIT_IT_EPOCH_EDGE) && (s.it[19].flags & PIT_IT_EPOCH_EDGE) &&
            (s.it[20].flags & PIT_IT_EPOCH_EDGE) && (s.it[5].flags & PIT_IT_WARMUP) && s.it[30].flags == 0,
        "flags");
  /* a group of two copies: twice the counts, the same t_p */
  struct pit_series g;
  pit_series_init(&g);
  CHECK(pit_series_append(&g, &s, &e) == 0 && pit_series_append(&g, &s, &e) == 0, "append");
  struct pit_summary gs;
  CHECK(pit_series_summarize(&g, &gs, &e) == 0, "group");
  CHECK(gs.nruns == 2 && gs.iters == 120 && gs.warmup == 2 * sm.warmup && gs.non_paramount == 12, "group counts");
  CHECK_NEAR(gs.tp.mean, sm.tp.mean, 1e-12, "group t_p");
  CHECK_NEAR(gs.total_s, 20.0, 0, "group total");
  pit_summary_release(&gs);
  pit_series_release(&g);
  pit_summary_release(&sm);
  pit_series_release(&s);

  /* one-line-per-rank records (foreign logs) and a resume */
  pit_series_init(&s);
  for (int gen = 0; gen < 2; gen++)
    for (int i = 0; i < 40; i++)
      for (int rank = 0; rank < 2; rank++) {
        pit_record_release(&r);
        r.type = PIT_REC_ITER;
        snprintf(r.run, sizeof r.run, "f");
        r.gen = gen;
        r.rank = rank;
        r.epoch = 0;
        r.iter = gen * 40 + i;
        r.step_s = rank ? 0.03 : 0.02;
        pit_series_add(&s, &r, &e);
      }
  pit_record_release(&r);
  CHECK(pit_series_summarize(&s, &sm, &e) == 0, "per-rank");
  CHECK(sm.iters == 80, "series rank 0 only: %lld", (long long)sm.iters);
  /* first and last of each (gen, epoch): 0, 39, 40 (also the resume), 79 */
  CHECK(sm.non_paramount == 4, "edges of both generations: %lld", (long long)sm.non_paramount);
  CHECK(s.it[80].flags & PIT_IT_RESUME, "resume flagged");
  CHECK(sm.slow_rank == 1 && fabs(sm.slow_excess - 0.5) < 1e-9, "slow rank from per-rank step times");
  CHECK_NEAR(sm.tp.mean, 0.02, 1e-12, "t_p of rank 0");
  pit_summary_release(&sm);
  pit_series_release(&s);
  /* a checkpoint in the middle of an epoch: both neighbours are set aside */
  pit_series_init(&s);
  for (int i = 0; i < 50; i++) {
    pit_record_release(&r);
    r.type = PIT_REC_ITER;
    snprintf(r.run, sizeof r.run, "c");
    r.epoch = 0;
    r.iter = i;
    r.step = i;
    r.step_s = i == 25 ? 0.5 : 0.01;
    pit_series_add(&s, &r, &e);
    if (i == 24) {
      pit_record_release(&r);
      r.type = PIT_REC_CHECKPOINT;
      snprintf(r.run, sizeof r.run, "c");
      r.ckpt_s = 0.4;
      pit_series_add(&s, &r, &e);
    }
  }
  pit_record_release(&r);
  CHECK(pit_series_summarize(&s, &sm, &e) == 0, "checkpoint series");
  CHECK((s.it[24].flags & PIT_IT_NEAR_EVENT) && (s.it[25].flags & PIT_IT_NEAR_EVENT) && !(s.it[23].flags & PIT_IT_NEAR_EVENT) &&
            !(s.it[26].flags & PIT_IT_NEAR_EVENT),
        "neighbours of the checkpoint");
  CHECK(sm.non_paramount == 4 && sm.checkpoint.n == 1, "edges + checkpoint neighbours: %lld", (long long)sm.non_paramount);
  CHECK_NEAR(sm.tp.mean, 0.01, 1e-15, "the slow step next to the checkpoint is not in t_p");
  pit_summary_release(&sm);
  pit_series_release(&s);
  pit_series_init(&s);
  CHECK(pit_series_summarize(&s, &sm, &e) == PIT_ENOTFOUND, "empty series");
}

int main(void) {
  quantiles();
  t_quantiles();
  mser();
  mser_oom();
  batch_means_ar1();
  config_fields();
  series_summary();
  return check_done();
}

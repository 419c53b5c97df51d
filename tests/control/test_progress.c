/* test_progress.c — progress.c on the DDP tutorial's epoch lines ("[GPU0]
 * Epoch e | Batchsize: b | Steps: L", printed as each epoch begins): the
 * steps between two lines are one measurement (span_rest counts down to 0 on
 * the span's last record, so the controller's status line counts the span
 * once, not L times: L equal values made its interval zero wide, seen on an
 * H200 as "finish in 13.4 s [13.4 s, 13.4 s]"); an epoch closed by a
 * snapshot line is timed; the epoch the program was in when it exited is
 * recorded done but untimed (no line marked its end; the time to the exit
 * holds the teardown: on the H200 its last epoch read 4.57 ms a step against
 * 0.94-1.09 ms for the others). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "control/progress.h"
#include "pitstop/record.h"

#define MAXR 64
struct got {
  const struct ctl_progress *p;
  int n;
  int type[MAXR];
  int64_t step[MAXR];
  double t[MAXR], step_s[MAXR];
  int64_t rest[MAXR];
};

static int take(void *ctx, const struct pit_record *r, struct pit_err *e) {
  (void)e;
  struct got *g = ctx;
  if (g->n < MAXR) {
    g->type[g->n] = r->type;
    g->step[g->n] = r->step;
    g->t[g->n] = r->t;
    g->step_s[g->n] = r->step_s;
    g->rest[g->n] = g->p->span_rest;
    g->n++;
  }
  return 0;
}

static void line(struct ctl_progress *p, struct got *g, const char *s, double t) {
  struct pit_err e = {0};
  CHECK(ctl_progress_line(p, s, strlen(s), t, take, g, &e) == 1, "'%s' not a progress line", s);
}

/* the iteration records from index k on, steps from..to */
static int iters(const struct got *g, int k, int64_t from, int64_t to) {
  int ok = 1;
  for (int64_t s = from; s <= to; s++, k++)
    ok &= k < g->n && g->type[k] == PIT_REC_ITER && g->step[k] == s;
  return ok;
}

int main(void) {
  struct ctl_progress p;
  struct got g = {.p = &p};
  struct pit_err e = {0};
  CHECK(ctl_progress_init(&p) == 0, "init");
  ctl_progress_gen(&p, 0.0);
  line(&p, &g, "[GPU0] Epoch 0 | Batchsize: 4 | Steps: 4", 1.0);
  CHECK(g.n == 0, "the first line alone emits nothing yet (%d)", g.n);
  line(&p, &g, "[GPU0] Epoch 1 | Batchsize: 4 | Steps: 4", 3.0);
  /* init, then steps 0..3 over (1, 3]: 0.5 s each, one span */
  CHECK(g.n == 5 && g.type[0] == PIT_REC_INIT, "init + 4 records (%d)", g.n);
  CHECK(iters(&g, 1, 0, 3), "steps 0..3");
  for (int k = 1; k < 5 && k < g.n; k++) {
    CHECK_NEAR(g.step_s[k], 0.5, 1e-12, "a step of the span");
    CHECK_NEAR(g.t[k], 1.0 + 0.5 * k, 1e-12, "its share of the span");
    CHECK(g.rest[k] == 4 - k, "span_rest %lld at record %d (want %d)", (long long)g.rest[k], k, 4 - k);
  }
  CHECK(p.span_rest == 0, "span_rest back to 0 between spans");
  /* a rank's line other than 0's is read but emits nothing */
  struct pit_err e2 = {0};
  CHECK(ctl_progress_line(&p, "[GPU1] Epoch 1 | Batchsize: 4 | Steps: 4", 40, 3.1, take, &g, &e2) == 0 &&
            g.n == 5,
        "rank 1's line");
  /* epoch 1 closed by its snapshot line at 4.0: timed */
  CHECK(ctl_progress_close(&p, 1, 4.0, take, &g, &e) == 0, "close");
  CHECK(g.n == 9 && iters(&g, 5, 4, 7), "steps 4..7 (%d records)", g.n);
  for (int k = 5; k < 9 && k < g.n; k++)
    CHECK_NEAR(g.step_s[k], 0.25, 1e-12, "a step of the snapshot-closed epoch");
  /* epoch 2 begins at 4.5; the program exits at 20.0 (teardown included): done, untimed */
  line(&p, &g, "[GPU0] Epoch 2 | Batchsize: 4 | Steps: 4", 4.5);
  CHECK(g.n == 9, "the epoch's first line emits nothing (%d)", g.n);
  CHECK(ctl_progress_end(&p, 20.0, take, &g, &e) == 0, "end");
  CHECK(g.n == 13 && iters(&g, 9, 8, 11), "steps 8..11 recorded at the exit (%d)", g.n);
  for (int k = 9; k < 13 && k < g.n; k++) {
    CHECK(isnan(g.step_s[k]), "the exited epoch's step %lld timed %.3g s: its end was never printed",
          (long long)g.step[k], g.step_s[k]);
    CHECK_NEAR(g.t[k], 20.0, 1e-12, "done by the exit");
  }
  ctl_progress_release(&p);
  return check_done();
}

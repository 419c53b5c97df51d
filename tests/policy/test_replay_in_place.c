/* test_replay_in_place.c — a replay prices a fixed membership with its own
 * start, not with the start of a generation that began in place (docs/run.md
 * 5b: the ranks that stayed after a shrink launch nothing, so that start is no
 * membership's). A synthetic events file: generation 0 on a:1+b:1, 9 s from
 * the nodes' start to its first step's start; the b node stopped after step 9;
 * generation 1 on a:1, its first step's start 0.3 s after that stop, its init
 * record's config saying "in_place": true. The fixed a:1 replayed alone pays
 * 9 s of start (the run's first launch stands in); the same file without the
 * marker pays 0.3 s, as a relaunch it would be.
 * Invariant: every number asserted follows from the events written here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy_fixture.h"
#include "pitstop/catalog.h"
#include "pitstop/policy.h"
#include "pitstop/record.h"

static void node(FILE *f, int gen, double t, const char *action, const char *id, const char *itype) {
  fprintf(f, "{\"type\":\"node\",\"run\":\"ip\",\"gen\":%d,\"t\":%.9g,\"action\":\"%s\",\"node\":\"%s\","
             "\"itype\":\"%s\",\"price_h\":0.1}\n",
          gen, t, action, id, itype);
}

/* steps a..b one second each, the first ending at t0; nranks ranks computing 0.9 s (b's 0.95 s) */
static void iters(FILE *f, int gen, double t0, int a, int b, int nranks) {
  for (int s = a; s <= b; s++)
    fprintf(f, "{\"type\":\"iter\",\"run\":\"ip\",\"gen\":%d,\"t\":%.9g,\"epoch\":0,\"iter\":%d,\"step\":%d,"
               "\"batch\":32,\"step_s\":1,\"compute_s\":%s,\"wait_s\":%s}\n",
            gen, t0 + (s - a), s, s, nranks == 2 ? "[0.9,0.95]" : "[0.9]", nranks == 2 ? "[0.05,0]" : "[0]");
}

static void write_run(const char *path, int marked) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "open %s", path);
  node(f, 0, 0, "start", "n0", "a");
  node(f, 0, 0, "start", "n1", "b");
  node(f, 0, 0, "ready", "n0", "a");
  node(f, 0, 0, "ready", "n1", "b");
  fputs("{\"type\":\"init\",\"run\":\"ip\",\"gen\":0,\"t\":8,\"init_s\":1,\"ranks\":2,\"nodes\":2,"
        "\"config\":{\"planned_iters\":100}}\n", f);
  iters(f, 0, 10, 0, 9, 2); /* the first step from 9 to 10: 9 s of start */
  fputs("{\"type\":\"end\",\"run\":\"ip\",\"gen\":0,\"t\":19.1,\"total_s\":19.1,\"status\":\"stopped\"}\n", f);
  node(f, 1, 19.2, "stop", "n1", "b");
  fprintf(f, "{\"type\":\"init\",\"run\":\"ip\",\"gen\":1,\"t\":19.3,\"init_s\":0.01,\"ranks\":1,\"nodes\":1,"
             "\"config\":{\"planned_iters\":100%s}}\n", marked ? ",\"in_place\":true" : "");
  iters(f, 1, 20.5, 10, 99, 1); /* the first step from 19.5 to 20.5: 0.3 s after the stop */
  fputs("{\"type\":\"end\",\"run\":\"ip\",\"gen\":1,\"t\":110,\"total_s\":90.7,\"status\":\"done\"}\n", f);
  node(f, 1, 110.2, "stop", "n0", "a");
  fclose(f);
}

static double fixed_a(const char *events, const struct pit_catalog *cat, const char *catpath) {
  struct pit_replay_opts o;
  struct pit_err e = {0};
  fixture_replay_opts(&o, cat, catpath, "a,b", 1, 2);
  struct pit_replay r;
  CHECK(pit_replay_events(events, &o, &r, &e) == 0, "replay %s: %s", events, e.msg);
  double t = NAN;
  for (int i = 0; i < r.nfixed; i++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&r.fixed[i].m, m, sizeof m);
    if (strcmp(m, "a:1") == 0)
      t = r.fixed[i].time_s;
  }
  pit_replay_release(&r);
  CHECK(isfinite(t), "no fixed a:1 in the replay of %s", events);
  return t;
}

int main(void) {
  char catpath[512], ev[512], plain[512];
  snprintf(ev, sizeof ev, "%s/in_place.jsonl", check_tmpdir());
  snprintf(plain, sizeof plain, "%s/relaunched.jsonl", check_tmpdir());
  struct pit_catalog cat;
  fixture_catalog(&cat, catpath, sizeof catpath, "itype\tvcpus\tprice_h\tbilling_s\tmin_s\na\t1\t0.1\t1\t0\nb\t1\t0.1\t1\t0\n");
  write_run(ev, 1);
  write_run(plain, 0);
  double t_in = fixed_a(ev, &cat, catpath), t_re = fixed_a(plain, &cat, catpath);
  /* 100 steps of 1 s, plus a start: 9 s (the run's first launch) or 0.3 s (generation 1's) */
  CHECK(fabs((t_in - t_re) - (9 - 0.3)) < 1e-6, "fixed a:1: %.3f s with the in-place marker, %.3f s without", t_in,
        t_re);
  CHECK(t_in >= 109 && t_in < 110.5, "fixed a:1 with its own start: %.3f s", t_in);
  pit_catalog_release(&cat);
  return check_done();
}

/* test_replay_market.c — `pitstop simulate --replay` of a spot run (issue 29,
 * deliver 7: "a replay of that run in simulate takes the same decisions", and
 * prices it right). A synthetic events file: generation 0 on one spot node
 * (its node record names "market": "spot"), the node reclaimed after step 199,
 * 19.5 s with no node, generation 1 on one on-demand node to the end. The
 * replay (pit_replay_events):
 *  - bills each node at its market's catalog price and follows the run's own
 *    restart (the reclaim and the change of market) at the same step, so its
 *    cost and time are the run's to the billed second;
 *  - compares no resize (the reclaim's replacement, same types, is none) and
 *    finds the same decisions;
 *  - prices its fixed memberships per market (c5.large@spot:1 at the spot price);
 *  - the same file in the old format (bare node records, no market) is billed
 *    at on-demand throughout, which is what the replay did before node records
 *    named their market.
 * Invariant: every number asserted follows from the events written here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy_fixture.h"
#include "pitstop/catalog.h"
#include "pitstop/policy.h"
#include "pitstop/record.h"

#define OD 0.085
#define SPOT 0.035

/* One node record; market NULL: the old format (no "market" key). */
static void node(FILE *f, int gen, double t, const char *action, const char *id, const char *market, double price) {
  fprintf(f, "{\"type\":\"node\",\"run\":\"rm\",\"gen\":%d,\"t\":%.9g,\"action\":\"%s\",\"node\":\"%s\","
             "\"itype\":\"c5.large\",\"price_h\":%.9g",
          gen, t, action, id, price);
  if (market)
    fprintf(f, ",\"market\":\"%s\",\"zone\":\"us-east-1a\"", market);
  fputs("}\n", f);
}

/* A generation: init at t0 − 2, steps a..b one second each, the first ending at t0. */
static void gen_iters(FILE *f, int gen, double t0, int a, int b) {
  fprintf(f, "{\"type\":\"init\",\"run\":\"rm\",\"gen\":%d,\"t\":%.9g,\"init_s\":1,\"ranks\":1,\"nodes\":1,"
             "\"config\":{\"planned_iters\":400}}\n",
          gen, t0 - 2);
  for (int s = a; s <= b; s++)
    fprintf(f, "{\"type\":\"iter\",\"run\":\"rm\",\"gen\":%d,\"t\":%.9g,\"epoch\":0,\"iter\":%d,\"step\":%d,"
               "\"batch\":32,\"step_s\":1,\"compute_s\":[0.9],\"wait_s\":[0]}\n",
            gen, t0 + (s - a), s, s);
}

static void write_run(const char *path, int old_format) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "open %s", path);
  node(f, 0, 0, "start", "i-1", old_format ? NULL : "spot", SPOT);
  node(f, 0, 5, "ready", "i-1", old_format ? NULL : "spot", SPOT);
  gen_iters(f, 0, 10, 0, 199); /* steps 0..199 at t = 10 .. 209 */
  fputs("{\"type\":\"end\",\"run\":\"rm\",\"gen\":0,\"t\":210,\"total_s\":210,\"status\":\"stopped\"}\n", f);
  node(f, 0, 210.5, "lost", "i-1", old_format ? NULL : "spot", SPOT); /* reclaimed */
  node(f, 1, 230, "start", "i-2", old_format ? NULL : "on-demand", OD); /* 19.5 s with no node */
  node(f, 1, 235, "ready", "i-2", old_format ? NULL : "on-demand", OD);
  gen_iters(f, 1, 240, 200, 399); /* steps 200..399 at t = 240 .. 439 */
  fputs("{\"type\":\"end\",\"run\":\"rm\",\"gen\":1,\"t\":440,\"total_s\":200,\"status\":\"done\"}\n", f);
  node(f, 1, 441, "stop", "i-2", old_format ? NULL : "on-demand", OD);
  fclose(f);
}

static void replay(const char *events, const struct pit_catalog *cat, const char *catpath, struct pit_replay *r) {
  struct pit_replay_opts o;
  struct pit_err e = {0};
  fixture_replay_opts(&o, cat, catpath, "c5.large", 1, 1);
  CHECK(pit_replay_events(events, &o, r, &e) == 0, "replay %s: %s", events, e.msg);
}

int main(void) {
  char catpath[512], ev[512], old[512], text[256];
  snprintf(ev, sizeof ev, "%s/events.jsonl", check_tmpdir());
  snprintf(old, sizeof old, "%s/old.jsonl", check_tmpdir());
  snprintf(text, sizeof text, "itype\tvcpus\tprice_h\tspot_price_h\tbilling_s\tmin_s\nc5.large\t2\t%g\t%g\t1\t60\n", OD,
           SPOT);
  struct pit_catalog cat;
  fixture_catalog(&cat, catpath, sizeof catpath, text);
  write_run(ev, 0);
  write_run(old, 1);

  /* the live bill: spot 0 .. 210.5 s (211 s billed), on-demand 230 .. 441 s (211 s billed) */
  double live = SPOT * 211 / 3600 + OD * 211 / 3600;
  struct pit_replay r;
  replay(ev, &cat, catpath, &r);
  CHECK_NEAR(r.cost_live, live, 1e-12, "the run's cost (node records billed)");
  CHECK_NEAR(r.cost_sim, r.cost_live, 1e-12, "the replay's cost is the run's (spot billed at spot)");
  CHECK_NEAR(r.time_sim, r.time_live, 1e-9, "the replay's time is the run's");
  CHECK(r.restarts == 1, "the run's restart followed: %d", r.restarts);
  CHECK(r.same && !r.diverged && r.nlive == 0 && r.nsim == 0, "the same decisions (no resize): live %d, replay %d",
        r.nlive, r.nsim);
  /* the fixed memberships, each alone for the whole job on its own market: 400 steps + 9 s start + the last stop */
  CHECK(r.nfixed == 2, "fixed memberships: %d", r.nfixed);
  for (int i = 0; i < r.nfixed; i++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&r.fixed[i].m, m, sizeof m);
    double p = strcmp(m, "c5.large@spot:1") == 0 ? SPOT : strcmp(m, "c5.large@on-demand:1") == 0 ? OD : NAN;
    CHECK(isfinite(p), "fixed %s", m);
    CHECK_NEAR(r.fixed[i].cost, p * ceil(r.fixed[i].time_s) / 3600, 1e-12, m);
  }
  pit_replay_release(&r);

  /* the old format: no market in the node records, so every node is billed on-demand (the old replay) */
  replay(old, &cat, catpath, &r);
  CHECK_NEAR(r.cost_live, live, 1e-12, "the old file's live cost (its price_h)");
  CHECK_NEAR(r.cost_sim, OD * 211 / 3600 + OD * 211 / 3600, 1e-12, "the old file replayed: all on-demand");
  CHECK(r.cost_sim > 1.4 * r.cost_live, "the old format's replay costs more than the run: %g vs %g", r.cost_sim,
        r.cost_live);
  pit_replay_release(&r);
  pit_catalog_release(&cat);
  return check_done();
}

/* test_one_run.c — one run, one model (issue 27): the run's report
 * (pit_run_result_price, printed by pit_run_result_write), its replay
 * (pit_replay_events, simulate --replay) and its timeline (pit_timeline_build,
 * what pitstop run's timeline.png draws) read one recorded events file
 * (tests/record/fixtures/run_schedule.jsonl: a `pitstop run`, local provider,
 * 60 steps, a schedule 1 → 2 nodes at step 30) through its one fold, and
 * agree: the same two generations and memberships, the same node intervals
 * (as the file's node records give them), and the same total, billed on a
 * catalog with a 60 s minimum (as aws.tsv bills), in every figure: the
 * report's nodes, generations and total, the replay's "this run (node
 * records)". Each node lived under 60 s, so the raw-seconds accounting the
 * replay and the generations used before (0.000696 $) differs from the bill
 * (0.003333 $) by almost 5x: this test fails on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/catalog.h"
#include "pitstop/control.h"
#include "pitstop/report.h"

/* The fixture's node records: id, start, stop (run seconds). */
static const struct { const char *id; double t0, t1; } nodes[2] = {
    {"fx1.0", 0.355111637, 17.4625677},
    {"fx1.1", 9.49620201, 17.4622465},
};

static void write_catalog(const char *path) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "catalog %s", path);
  if (!f)
    return;
  fputs("itype\tvcpus\tcpus\tcpu_quota\tprice_h\tbilling_s\tmin_s\n"
        "local-1\t1\t1\t-\t0.10\t1\t60\n"
        "local-0.4\t1\t1\t40%\t0.10\t1\t60\n",
        f);
  fclose(f);
}

int main(void) {
  const char *src = getenv("PIT_SOURCE_DIR");
  char events[1024], catpath[1024];
  snprintf(events, sizeof events, "%s/tests/record/fixtures/run_schedule.jsonl", src ? src : "..");
  snprintf(catpath, sizeof catpath, "%s/cat60.tsv", check_tmpdir());
  write_catalog(catpath);
  struct pit_err e = {0};
  struct pit_catalog cat;
  CHECK(pit_catalog_load(&cat, catpath, &e) == 0, "%s", e.msg);
  struct pit_runlog log;
  pit_runlog_init(&log);
  CHECK(pit_runlog_load(&log, events, &e) == 0, "%s", e.msg);

  /* the one accounting: every node billed 60 s at 0.10 $/h */
  struct pit_runlog_cost bill;
  CHECK(pit_runlog_cost(&log, &cat, NAN, &bill, &e) == 0, "%s", e.msg);
  double want = 2 * 0.10 / 3600 * 60;
  CHECK_NEAR(bill.total, want, 1e-12, "billed total");
  CHECK(bill.nnodes == 2 && bill.ngens == 2, "bill of %d nodes, %d generations", bill.nnodes, bill.ngens);
  for (int i = 0; i < 2 && i < bill.nnodes; i++) {
    CHECK_NEAR(bill.nodes[i].secs, nodes[i].t1 - nodes[i].t0, 1e-9, "node raw seconds");
    CHECK(bill.nodes[i].billed_s == 60, "node %d billed %g s", i, bill.nodes[i].billed_s);
  }
  CHECK_NEAR(bill.gen_cost[0] + bill.gen_cost[1], bill.total, 1e-12, "generations add up to the total");
  /* fx1.0 ran in generation 0 until generation 1's first record (its node fx1.1's start) */
  CHECK_NEAR(bill.gen_cost[0], 0.10 / 3600 * 60 * (nodes[1].t0 - nodes[0].t0) / (nodes[0].t1 - nodes[0].t0), 1e-12,
             "generation 0's share");

  /* the timeline */
  struct pit_timeline tl;
  CHECK(pit_timeline_build(&log, &tl, &e) == 0, "%s", e.msg);
  CHECK(tl.nbars == 2 && tl.ngens == 2, "timeline: %d bars, %d generations", tl.nbars, tl.ngens);
  for (int i = 0; i < 2 && i < tl.nbars; i++) {
    CHECK_NEAR(tl.bars[i].x0, nodes[i].t0, 1e-12, "timeline node start");
    CHECK_NEAR(tl.bars[i].x1, nodes[i].t1, 1e-12, "timeline node stop");
  }
  CHECK(tl.ngens == 2 && strcmp(tl.gens[0].label, "gen 0 local-1:1") == 0 &&
            strcmp(tl.gens[1].label, "gen 1 local-0.4:1+local-1:1") == 0 && !tl.gens[0].failed,
        "timeline generations %s | %s", tl.ngens > 0 ? tl.gens[0].label : "", tl.ngens > 1 ? tl.gens[1].label : "");

  /* the replay: the same total, the run's time to its last node's stop, its resize, its memberships */
  struct pit_replay_opts o;
  memset(&o, 0, sizeof o);
  o.nmin = 1;
  o.nmax = 2;
  o.ranks_per_node = 1;
  o.catalog = &cat;
  CHECK(pit_policy_parse(&o.policy, "cost", &e) == 0, "%s", e.msg);
  CHECK(pit_policy_types(&cat, catpath, "local-1,local-0.4", o.types, &o.ntypes, &e) == 0, "%s", e.msg);
  struct pit_replay r;
  CHECK(pit_replay_events(events, &o, &r, &e) == 0, "%s", e.msg);
  CHECK_NEAR(r.cost_live, bill.total, 1e-12, "replay: this run (node records)");
  CHECK_NEAR(r.time_live, nodes[0].t1, 1e-9, "replay: the run's time");
  CHECK(r.steps == 60, "replay steps %lld", (long long)r.steps);
  char m[PIT_MEMBERSHIP_TEXT_MAX];
  CHECK(r.nlive == 1 && r.live[0].step == 30, "replay: the run's resize");
  if (r.nlive == 1) {
    pit_membership_format(&r.live[0].to, m, sizeof m);
    CHECK(strcmp(m, "local-0.4:1+local-1:1") == 0, "resize to %s", m);
  }
  CHECK(r.nfixed == 2, "fixed memberships %d", r.nfixed);
  for (int i = 0; i < r.nfixed && i < tl.ngens; i++) { /* the memberships the timeline labels, in order */
    char label[PIT_MEMBERSHIP_TEXT_MAX + 32];
    pit_membership_format(&r.fixed[i].m, m, sizeof m);
    snprintf(label, sizeof label, "gen %d %s", i, m);
    CHECK(strcmp(label, tl.gens[i].label) == 0, "fixed %s against the timeline's %s", label, tl.gens[i].label);
    /* each node of a fixed membership billed for the whole replayed job (60 s minimum) */
    double secs = r.fixed[i].time_s > 60 ? r.fixed[i].time_s : 60;
    CHECK_NEAR(r.fixed[i].cost, (i + 1) * 0.10 / 3600 * ceil(secs), 1e-9, "fixed membership billed");
  }

  /* the report: nodes and generations as the controller lists them, priced from the same fold */
  struct pit_run_result *res = calloc(1, sizeof *res);
  CHECK(res != NULL, "memory");
  if (res) {
    snprintf(res->events, sizeof res->events, "%s", events);
    res->ngens = res->nnodes = 2;
    for (int i = 0; i < 2; i++) {
      res->gens[i] = (struct pit_run_gen){.gen = i, .cost = NAN};
      snprintf(res->gens[i].end, sizeof res->gens[i].end, "%s", i ? "done" : "resized");
      snprintf(res->nodes[i].id, sizeof res->nodes[i].id, "%s", nodes[i].id);
      res->nodes[i].cost = NAN;
    }
    CHECK(pit_run_result_price(res, &cat, &e) == 0, "%s", e.msg);
    CHECK_NEAR(res->cost, r.cost_live, 1e-12, "report total = replay's this run");
    CHECK_NEAR(res->gens[0].cost + res->gens[1].cost, res->cost, 1e-12, "report generations = total");
    for (int i = 0; i < 2; i++) {
      CHECK_NEAR(res->nodes[i].cost, bill.nodes[i].cost, 1e-12, "report node cost");
      CHECK(res->nodes[i].billed_s == 60, "report node billed %g s", res->nodes[i].billed_s);
      CHECK_NEAR(res->gens[i].cost, bill.gen_cost[i], 1e-12, "report generation cost");
    }
    /* printed: the total line carries the same figure as the replay's line */
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    CHECK(f != NULL, "memstream");
    if (f) {
      pit_run_result_write(f, res, "fx1", "r1");
      fclose(f);
      char total[64];
      snprintf(total, sizeof total, "cost $%.4f\n", r.cost_live);
      CHECK(text && strstr(text, total), "report total line '%s' in:\n%s", total, text ? text : "");
    }
    free(text);
    free(res);
  }
  pit_replay_release(&r);
  pit_timeline_release(&tl);
  pit_runlog_cost_release(&bill);
  pit_runlog_release(&log);
  pit_catalog_release(&cat);
  return check_done();
}

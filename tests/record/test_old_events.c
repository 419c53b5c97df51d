/* test_old_events.c — events files written before decisions were complete structs
 * (tests/record/fixtures/old_spot_run.jsonl and old_cost_run.jsonl: the main
 * build's `pitstop run --policy cost` on the fake AWS CLI with spot prices, and on
 * local-1 + local-0.4; iterations trimmed) read by today's decoder and run log:
 *  - every decision's detail decodes, and encoding the struct gives the detail
 *    back byte for byte (the format is the one the controller always wrote, so
 *    an old reader reads new files and a new reader old ones);
 *  - the decisions, their memberships and markets are the ones the files hold
 *    (policy, action, from, to, the alternatives' kinds, models, t_p intervals,
 *    fits), as the fold hands them to the report, the replay and status;
 *  - their node records, written before nodes named their market and zone, still
 *    fold (bare types, no market, no zone).
 * Invariant: the fixtures are never rewritten by a newer build: they are the old
 * format. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/record.h"

static void fixture(char *path, size_t n, const char *name) {
  const char *src = getenv("PIT_SOURCE_DIR");
  snprintf(path, n, "%s/tests/record/fixtures/%s", src ? src : "..", name);
}

/* Every decision record of path: decode → encode gives its detail back. */
static int same_text(const char *path) {
  struct pit_err e = {0};
  struct pit_record_reader rd;
  struct pit_record r;
  pit_record_init(&r);
  CHECK(pit_record_reader_open(&rd, path, &e) == 0, "%s", e.msg);
  int ndec = 0, rc;
  while ((rc = pit_record_reader_next(&rd, &r, &e)) == 1) {
    if (r.type == PIT_REC_DECISION) {
      struct pit_decision d;
      char *txt = NULL;
      pit_decision_init(&d);
      CHECK(pit_decision_decode(&d, r.detail, &e) == 0, "%s:%ld: %s", path, rd.lineno, e.msg);
      CHECK(pit_decision_encode(&d, &txt, &e) == 0, "%s", e.msg);
      CHECK(txt && strcmp(txt, r.detail) == 0, "%s:%ld: encoded again differs:\n%s\n%s", path, rd.lineno, r.detail,
            txt);
      free(txt);
      pit_decision_release(&d);
      ndec++;
    }
    pit_record_release(&r);
  }
  CHECK(rc == 0, "%s", e.msg);
  pit_record_reader_release(&rd);
  return ndec;
}

static const char *text(const struct pit_membership *m) {
  static char buf[4][PIT_MEMBERSHIP_TEXT_MAX]; /* a test's: four at a time in one CHECK */
  static int k;
  k = (k + 1) % 4;
  pit_membership_format(m, buf[k], sizeof buf[k]);
  return buf[k];
}

/* The fixture name folded into log, after its decisions (ndec of them) were
 * each found to encode back as written. */
static void load(struct pit_runlog *log, const char *name, int ndec) {
  char path[1100];
  fixture(path, sizeof path, name);
  CHECK(same_text(path) == ndec, "%s: %d decisions, each encoded again as written", name, ndec);
  struct pit_err e = {0};
  pit_runlog_init(log);
  CHECK(pit_runlog_load(log, path, &e) == 0, "%s", e.msg);
  CHECK(log->ndec == ndec, "%s: decisions %d in the fold", name, log->ndec);
}

static void spot_run(void) {
  struct pit_runlog log;
  load(&log, "old_spot_run.jsonl", 7);
  /* the spot layer's first choice: spot, nothing measured yet */
  const struct pit_decision *d = &log.dec[0].d;
  CHECK(strcmp(d->kind, "spot") == 0 && strcmp(d->policy, "spot") == 0 && strcmp(d->action, "market") == 0 &&
            d->step == 0,
        "first decision %s %s %s", d->kind, d->policy, d->action);
  CHECK(d->from.n == 1 && strcmp(d->from.m[0].itype, "c5.large") == 0 && d->from.m[0].market == PIT_MARKET_DEFAULT &&
            d->to.n == 1 && strcmp(d->to.m[0].itype, "c5.large") == 0 && d->to.m[0].market == PIT_MARKET_SPOT &&
            d->to.m[0].nodes == 1,
        "from %s (the provider's market) to %s (spot)", text(&d->from), text(&d->to));
  CHECK(d->nalts == 2 && d->alts[0].m.m[0].market == PIT_MARKET_SPOT &&
            d->alts[1].m.m[0].market == PIT_MARKET_DEFAULT && !d->alts[0].what[0] && isnan(d->alts[0].pit_s) &&
            d->alts[0].fits == -1,
        "alternatives no policy weighed: %s, %s", text(&d->alts[0].m), text(&d->alts[1].m));
  CHECK(d->reason && strstr(d->reason, "market idle → spot") && strstr(d->reason, "(policy spot)"), "reason");
  /* a spot decision point: both markets weighed, with the rest of the job on each */
  d = &log.dec[1].d;
  CHECK(strcmp(d->policy, "spot") == 0 && strcmp(d->action, "keep") == 0 && d->step == 200 && d->nalts == 2,
        "spot point");
  CHECK(strcmp(d->alts[0].what, "spot") == 0 && strcmp(d->alts[1].what, "on-demand") == 0 &&
            d->alts[1].m.m[0].market == PIT_MARKET_ON_DEMAND && strcmp(d->alts[0].model, "measured") == 0 &&
            d->alts[0].fits == 1,
        "markets weighed: %s %s", text(&d->alts[0].m), text(&d->alts[1].m));
  CHECK_NEAR(d->alts[0].pit_s, 0.14564722746249995, 0, "spot t_p");
  CHECK_NEAR(d->alts[1].predicted_s, 25.891426702252566, 0, "on-demand: the rest of the job and a restart");
  CHECK_NEAR(d->alts[1].predicted_hi, 25.891426702252566, 0, "its interval's end");
  /* the cost policy's keep on the spot market: the markets put back on its (bare) alternatives */
  d = &log.dec[2].d;
  CHECK(strcmp(d->policy, "cost") == 0 && strcmp(d->alts[1].what, "add") == 0 && d->alts[1].m.m[0].nodes == 2 &&
            d->alts[1].m.m[0].market == PIT_MARKET_SPOT &&
            strcmp(d->alts[1].model, "per-rank split + catalog speed, equal shares") == 0,
        "cost keep: %s", text(&d->alts[1].m));
  CHECK_NEAR(d->alts[0].pit_lo, 0.12273118914470446, 0, "keep's t_p low");
  CHECK_NEAR(d->alts[0].pit_hi, 0.16856326578029543, 0, "keep's t_p high");
  CHECK(log.nnodes == 1 && strcmp(log.nodes[0].id, "i-00000f01") == 0 && log.nodes[0].price_h == 0.035,
        "the spot node (billed at the spot price)");
  /* written before node records named their market and zone: a bare type, no market, no zone */
  CHECK(log.nodes[0].market == PIT_MARKET_DEFAULT && !log.nodes[0].zone[0] &&
            strcmp(log.nodes[0].base, "c5.large") == 0,
        "the old node record: bare, no market or zone (market %d, zone '%s')", (int)log.nodes[0].market,
        log.nodes[0].zone);
  pit_runlog_release(&log);
}

static void cost_run(void) {
  struct pit_runlog log;
  load(&log, "old_cost_run.jsonl", 14);
  CHECK(log.ngens == 2, "generations %d", log.ngens);
  const struct pit_decision *d = &log.dec[0].d;
  CHECK(strcmp(d->kind, "remove") == 0 && strcmp(d->action, "resize") == 0 && d->step == 30 &&
            strcmp(text(&d->from), "local-0.4:1+local-1:1") == 0 && strcmp(text(&d->to), "local-0.4:1") == 0,
        "the resize: %s %s → %s", d->kind, text(&d->from), text(&d->to));
  CHECK(d->nalts == 5 && pit_membership_equal(&d->alts[0].m, &d->to) && strcmp(d->alts[0].what, "remove") == 0 &&
            strcmp(d->alts[0].model, "per-rank split, equal shares") == 0 && d->alts[0].fits == 1 &&
            strcmp(d->alts[1].what, "keep") == 0 && strcmp(d->alts[1].model, "measured (25 iterations)") == 0,
        "the chosen first, then keep");
  CHECK_NEAR(d->alts[0].pit_s, 0.03358766632, 0, "t_p predicted");
  CHECK_NEAR(d->alts[0].predicted_lo, 21.27322433204, 0, "the rest's interval");
  CHECK_NEAR(d->alts[0].predicted_hi, 27.01671527276, 0, "the rest's interval");
  for (int i = 1; i < log.ndec; i++)
    CHECK(strcmp(log.dec[i].d.action, "keep") == 0 && pit_membership_equal(&log.dec[i].d.to, &log.dec[0].d.to) &&
              log.dec[i].d.nalts == 4,
          "decision %d: a keep of local-0.4:1", i);
  pit_runlog_release(&log);
}

int main(void) {
  spot_run();
  cost_run();
  return check_done();
}

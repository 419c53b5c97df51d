/* test_old_decisions.c — a store written before decisions were complete structs
 * (tests/store/fixtures/old_decisions.sql: the main build's `pitstop parse --db` of
 * tests/record/fixtures/old_spot_run.jsonl, iterations past step 1 left out) opens
 * with today's store, and its decision records decode, with today's decoder, to
 * the decisions the events file holds (every field, markets included), each
 * encoding back to the text the store keeps.
 * Invariant: the fixture is never rewritten by a newer build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sql_fixture.h"
#include "pitstop/record.h"
#include "pitstop/store.h"

/* The file's decision records decoded, in order, into d (at most cap); their count. */
static int events_decisions(const char *path, struct pit_decision *d, int cap) {
  struct pit_err e = {0};
  struct pit_record_reader rd;
  struct pit_record r;
  int n = 0;
  pit_record_init(&r);
  CHECK(pit_record_reader_open(&rd, path, &e) == 0, "%s", e.msg);
  while (pit_record_reader_next(&rd, &r, &e) == 1) {
    if (r.type == PIT_REC_DECISION && n < cap) {
      pit_decision_init(&d[n]);
      CHECK(pit_decision_decode(&d[n], r.detail, &e) == 0, "%s", e.msg);
      n++;
    }
    pit_record_release(&r);
  }
  pit_record_reader_release(&rd);
  return n;
}

int main(void) {
  const char *src = getenv("PIT_SOURCE_DIR");
  char ev[600], db[600];
  snprintf(ev, sizeof ev, "%s/tests/record/fixtures/old_spot_run.jsonl", src ? src : ".");
  snprintf(db, sizeof db, "%s/old.db", check_tmpdir());
  if (!sql_fixture_load("old_decisions.sql", db))
    return check_done();

  struct pit_decision want[16];
  int nwant = events_decisions(ev, want, 16);
  CHECK(nwant == 7, "the events file's decisions: %d", nwant);

  struct pit_store *s = NULL;
  struct pit_err e = {0};
  CHECK(pit_store_open_existing(&s, db, &e) == 0, "old store opens: %s", e.msg);
  if (!s)
    return check_done();
  struct pit_store_cursor *c = NULL;
  CHECK(pit_store_cursor_open(s, "fxspot", &c, &e) == 0, "run fxspot: %s", e.msg);
  struct pit_record r;
  pit_record_init(&r);
  int k = 0, rc;
  while (c && (rc = pit_store_cursor_next(c, &r, &e)) == 1) {
    if (r.type != PIT_REC_DECISION)
      continue;
    struct pit_decision d;
    char *txt = NULL;
    pit_decision_init(&d);
    CHECK(pit_decision_decode(&d, r.detail, &e) == 0, "stored decision %d: %s", k, e.msg);
    CHECK(k < nwant && pit_decision_equal(&d, &want[k]), "stored decision %d equals the events file's", k);
    CHECK(pit_decision_encode(&d, &txt, &e) == 0 && strcmp(txt, r.detail) == 0, "stored decision %d encodes back", k);
    if (k == 0)
      CHECK(d.to.n == 1 && d.to.m[0].market == PIT_MARKET_SPOT && d.from.m[0].market == PIT_MARKET_DEFAULT &&
                strcmp(d.to.m[0].itype, "c5.large") == 0 && strcmp(d.action, "market") == 0,
            "the first: to c5.large on the spot market");
    if (k == 1)
      CHECK(d.nalts == 2 && d.alts[1].m.m[0].market == PIT_MARKET_ON_DEMAND && strcmp(d.alts[1].what, "on-demand") == 0,
            "the second weighs on-demand");
    free(txt);
    pit_decision_release(&d);
    k++;
  }
  CHECK(k == nwant, "stored decisions %d, in the events file %d", k, nwant);
  pit_record_release(&r);
  pit_store_cursor_free(c);
  pit_store_close(s, &e);
  for (int i = 0; i < nwant; i++)
    pit_decision_release(&want[i]);
  return check_done();
}

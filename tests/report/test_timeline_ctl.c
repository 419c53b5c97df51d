/* test_timeline_ctl.c — the timeline of a run continued after its controller
 * stopped: tests/record/fixtures/run_ctl_stop.jsonl, the PyTorch examples'
 * MNIST script under `pitstop run --nodes local-1:1`, the controller SIGKILLed
 * at 12 s and started again, which adopted node mk.0 (a second "ready" record
 * of generation 1). Generation 0 has no end record and no decision, as a
 * failed one; it is labelled "(controller stopped)", not "failed" (until
 * 2026-11-29 the chart said "gen 0 failed"), and a generation that failed
 * with no adoption after it still says "failed". Its script's records were
 * held when the kill came, so generation 0 has node records alone: its label
 * names the node up then (until 2026-11-30 it named no membership). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/control.h"
#include "pitstop/report.h"

static void adopted(void) {
  const char *src = getenv("PIT_SOURCE_DIR");
  char events[1024];
  snprintf(events, sizeof events, "%s/tests/record/fixtures/run_ctl_stop.jsonl", src ? src : "..");
  struct pit_err e = {0};
  struct pit_runlog log;
  pit_runlog_init(&log);
  CHECK(pit_runlog_load(&log, events, &e) == 0, "%s", e.msg);
  CHECK(log.nnodes == 1 && log.nodes[0].adopted_gen == 1 && log.nodes[0].gen == 0, "node mk.0: gen %d, adopted %d",
        log.nnodes ? log.nodes[0].gen : -9, log.nnodes ? log.nodes[0].adopted_gen : -9);
  struct pit_timeline tl;
  CHECK(pit_timeline_build(&log, &tl, &e) == 0, "%s", e.msg);
  CHECK(tl.ngens == 2, "%d generations", tl.ngens);
  if (tl.ngens == 2) {
    CHECK(!tl.gens[0].failed && strcmp(tl.gens[0].label, "gen 0 local-1:1 (controller stopped)") == 0,
          "gen 0: '%s' failed %d", tl.gens[0].label, tl.gens[0].failed);
    CHECK(strcmp(tl.gens[1].label, "gen 1 local-1:1") == 0, "gen 1: '%s'", tl.gens[1].label);
  }
  pit_timeline_release(&tl);
  /* the same run with no adoption (the restarted controller stopped the node and started another): failed */
  log.nodes[0].adopted_gen = -1;
  CHECK(pit_timeline_build(&log, &tl, &e) == 0, "%s", e.msg);
  CHECK(tl.ngens == 2 && tl.gens[0].failed && strcmp(tl.gens[0].label, "gen 0 local-1:1 failed") == 0,
        "gen 0 without: '%s'", tl.ngens ? tl.gens[0].label : "");
  pit_timeline_release(&tl);
  pit_runlog_release(&log);
}

int main(void) {
  adopted();
  return check_done();
}

/* test_timeline_ctl.c — the timeline of a run continued after its controller
 * stopped. (1) tests/record/fixtures/run_ctl_stop.jsonl: the PyTorch examples'
 * MNIST script under `pitstop run --nodes local-1:1`, the controller SIGKILLed
 * at 12 s and started again, which adopted node mk.0 (a second "ready" record
 * of generation 1). Generation 0 has no end record and no decision, as a
 * failed one; it is labelled "(controller stopped)", not "failed" (until
 * 2026-11-29 the chart said "gen 0 failed"), and a generation that failed
 * with no adoption after it still says "failed". Its script's records were
 * held when the kill came, so generation 0 has node records alone: its label
 * names the node up then (until 2026-11-29 it named no membership). (2) A
 * restart that adopted no node (the killed controller's node was gone: the
 * restarted one recorded its stop and started another, its node records
 * "continued": true): generation 0 is "(controller stopped)" too (until
 * 2026-11-29 "failed"); the same file without the field (a restart after a
 * failure, or a file written before the field) still says "failed". */
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

/* The timeline of events (text; "@" replaced by mark, "" or ",\"continued\":true"). */
static void build(const char *name, const char *text, const char *mark, struct pit_timeline *tl) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "%s", path);
  for (const char *p = text; f && *p; p++)
    if (*p == '@')
      fputs(mark, f);
    else
      fputc(*p, f);
  if (f)
    fclose(f);
  struct pit_err e = {0};
  struct pit_runlog log;
  pit_runlog_init(&log);
  CHECK(pit_runlog_load(&log, path, &e) == 0, "%s", e.msg);
  CHECK(pit_timeline_build(&log, tl, &e) == 0, "%s", e.msg);
  pit_runlog_release(&log);
}

static void not_adopted(void) {
  /* generation 0 on r.0; the controller killed at 3 s; the restarted one found r.0 gone: it
   * recorded its stop and started r.1 (generation 1, its node records marked), which finished */
  const char *text =
      "{\"type\":\"node\",\"run\":\"r\",\"gen\":0,\"t\":0.1,\"action\":\"start\",\"node\":\"r.0\",\"itype\":\"local-1\",\"price_h\":0.05}\n"
      "{\"type\":\"node\",\"run\":\"r\",\"gen\":0,\"t\":0.2,\"action\":\"ready\",\"node\":\"r.0\",\"itype\":\"local-1\",\"price_h\":0.05}\n"
      "{\"type\":\"init\",\"run\":\"r\",\"gen\":0,\"t\":1.2,\"init_s\":1,\"ranks\":1,\"config\":{\"membership\":[{\"itype\":\"local-1\",\"nodes\":1}]}}\n"
      "{\"type\":\"iter\",\"run\":\"r\",\"gen\":0,\"t\":1.5,\"epoch\":0,\"iter\":0,\"step\":0,\"batch\":8,\"step_s\":0.3}\n"
      "{\"type\":\"checkpoint\",\"run\":\"r\",\"gen\":0,\"t\":1.6,\"step\":1,\"path\":\"/c/1\",\"ckpt_s\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"r\",\"gen\":1,\"t\":9.0,\"action\":\"stop\",\"node\":\"r.0\",\"itype\":\"local-1\",\"price_h\":0.05@}\n"
      "{\"type\":\"node\",\"run\":\"r\",\"gen\":1,\"t\":9.1,\"action\":\"start\",\"node\":\"r.1\",\"itype\":\"local-1\",\"price_h\":0.05@}\n"
      "{\"type\":\"node\",\"run\":\"r\",\"gen\":1,\"t\":9.2,\"action\":\"ready\",\"node\":\"r.1\",\"itype\":\"local-1\",\"price_h\":0.05@}\n"
      "{\"type\":\"init\",\"run\":\"r\",\"gen\":1,\"t\":10.2,\"init_s\":1,\"ranks\":1,\"config\":{\"membership\":[{\"itype\":\"local-1\",\"nodes\":1}]}}\n"
      "{\"type\":\"iter\",\"run\":\"r\",\"gen\":1,\"t\":10.5,\"epoch\":0,\"iter\":1,\"step\":1,\"batch\":8,\"step_s\":0.3}\n"
      "{\"type\":\"end\",\"run\":\"r\",\"gen\":1,\"t\":10.6,\"total_s\":1.4,\"status\":\"done\"}\n"
      "{\"type\":\"node\",\"run\":\"r\",\"gen\":1,\"t\":10.7,\"action\":\"stop\",\"node\":\"r.1\",\"itype\":\"local-1\",\"price_h\":0.05@}\n";
  struct pit_timeline tl;
  build("continued.jsonl", text, ",\"continued\":true", &tl);
  CHECK(tl.ngens == 2, "%d generations", tl.ngens);
  if (tl.ngens == 2) {
    CHECK(!tl.gens[0].failed && strcmp(tl.gens[0].label, "gen 0 local-1:1 (controller stopped)") == 0,
          "continued: gen 0 '%s' failed %d", tl.gens[0].label, tl.gens[0].failed);
    CHECK(!tl.gens[1].failed && strcmp(tl.gens[1].label, "gen 1 local-1:1") == 0, "continued: gen 1 '%s'",
          tl.gens[1].label);
  }
  pit_timeline_release(&tl);
  build("unmarked.jsonl", text, "", &tl);
  CHECK(tl.ngens == 2 && tl.gens[0].failed && strcmp(tl.gens[0].label, "gen 0 local-1:1 failed") == 0,
        "unmarked: gen 0 '%s'", tl.ngens ? tl.gens[0].label : "");
  pit_timeline_release(&tl);
}

int main(void) {
  adopted();
  not_adopted();
  return check_done();
}

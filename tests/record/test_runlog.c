/* test_runlog.c — the run log's fold (src/record/runlog.c) on a recorded run and
 * on synthetic records: a recorded `pitstop run` (fixtures/run_schedule.jsonl,
 * local provider, cnn on synthetic data, 60 steps, a schedule 1 → 2 nodes at
 * step 30) folds into its two generations, two nodes, one resize decision and
 * two checkpoints; a failed generation (no end record) and a lost node; a
 * truncated last line (a live file) is left for later, a malformed complete one
 * is an error naming file:line; the fold of a file equals the fold of its
 * records added one by one; a generation whose init and iteration records are
 * missing (a kill, a failure before its first iteration, a cut file) takes
 * the nodes its node records left up as its membership (until 2026-11-29 it
 * had none), and a node record's "continued" marks its generation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/record.h"

static void put(FILE *f, const char *line) { fputs(line, f); }

static int load_text(struct pit_runlog *log, const char *name, const char *text, struct pit_err *e) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
  FILE *f = fopen(path, "w");
  if (f) { /* a path in a missing directory stays missing */
    put(f, text);
    fclose(f);
  }
  pit_runlog_init(log);
  return pit_runlog_load(log, path, e);
}

static void recorded_run(void) {
  const char *src = getenv("PIT_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/record/fixtures/run_schedule.jsonl", src ? src : "..");
  struct pit_err e = {0};
  struct pit_runlog log;
  pit_runlog_init(&log);
  CHECK(pit_runlog_load(&log, path, &e) == 0, "%s", e.msg);
  CHECK(strcmp(log.run, "fx1") == 0, "run %s", log.run);
  CHECK(log.ngens == 2, "generations %d", log.ngens);
  CHECK(log.planned_iters == 60, "planned %lld", (long long)log.planned_iters);
  CHECK(log.niters == 60, "iterations %lld", (long long)log.niters);
  CHECK(pit_runlog_step(&log) == 59, "last step");
  CHECK(pit_runlog_finished(&log), "finished");
  CHECK(!log.truncated, "not truncated");
  char m[PIT_MEMBERSHIP_TEXT_MAX];
  const struct pit_runlog_gen *g0 = &log.gens[0], *g1 = &log.gens[1];
  pit_membership_format(&g0->m, m, sizeof m);
  CHECK(strcmp(m, "local-1:1") == 0, "gen 0 membership %s", m);
  pit_membership_format(&g1->m, m, sizeof m);
  CHECK(strcmp(m, "local-0.4:1+local-1:1") == 0, "gen 1 membership %s", m);
  CHECK(g0->step_first == 0 && g0->step_last == 32 && g0->niters == 33, "gen 0 steps %lld-%lld",
        (long long)g0->step_first, (long long)g0->step_last);
  CHECK(g1->step_first == 33 && g1->step_last == 59 && g1->niters == 27, "gen 1 steps");
  CHECK(strcmp(g0->status, "stopped") == 0 && strcmp(g1->status, "done") == 0, "ends %s %s", g0->status, g1->status);
  CHECK_NEAR(g0->t_end, 8.28212428, 1e-9, "gen 0 end");
  CHECK_NEAR(g1->total_s, 3.23157357, 1e-9, "gen 1 total_s");
  CHECK(g1->ranks == 2 && g0->ranks == 1, "ranks");
  CHECK_NEAR(g1->t_first_iter, 14.4719295, 1e-9, "gen 1 first iteration");
  CHECK(log.nnodes == 2 && log.nup == 0, "nodes %d up %d", log.nnodes, log.nup);
  CHECK(strcmp(log.nodes[0].id, "fx1.0") == 0 && strcmp(log.nodes[1].id, "fx1.1") == 0, "node order");
  CHECK_NEAR(log.nodes[1].t_start, 9.49620201, 1e-9, "fx1.1 start");
  CHECK_NEAR(log.nodes[1].t_stop, 17.4622465, 1e-9, "fx1.1 stop");
  CHECK_NEAR(log.nodes[0].t_ready, 0.355148085, 1e-9, "fx1.0 ready");
  CHECK(log.nodes[1].gen == 1 && !log.nodes[1].lost && log.nodes[1].market == PIT_MARKET_DEFAULT, "fx1.1 gen, market");
  CHECK_NEAR(log.nodes[0].price_h, 0.1, 1e-12, "price");
  CHECK(log.ndec == 1, "decisions %d", log.ndec);
  const struct pit_runlog_decision *d = &log.dec[0];
  CHECK(strcmp(d->d.action, "resize") == 0 && strcmp(d->d.policy, "schedule") == 0, "action %s policy %s",
        d->d.action, d->d.policy);
  char from[PIT_MEMBERSHIP_TEXT_MAX], to[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&d->d.from, from, sizeof from);
  pit_membership_format(&d->d.to, to, sizeof to);
  CHECK(strcmp(from, "local-1:1") == 0 && strcmp(to, "local-0.4:1+local-1:1") == 0, "from %s to %s", from, to);
  CHECK(d->d.step == 30 && d->d.reason && strstr(d->d.reason, "schedule:"), "step, reason");
  CHECK(log.nckpt == 2 && log.ckpt[0].step == 33 && log.ckpt[1].step == 60 && log.ckpt[1].bytes == 496400,
        "checkpoints");
  CHECK(strstr(log.ckpt[0].path, "checkpoint-000000000033.pit") != NULL, "checkpoint path %s", log.ckpt[0].path);
  CHECK_NEAR(log.t_last, 17.4625677, 1e-9, "last t");

  /* the same records added one by one fold the same */
  struct pit_runlog one;
  pit_runlog_init(&one);
  struct pit_record_reader rd;
  struct pit_record r;
  pit_record_init(&r);
  CHECK(pit_record_reader_open(&rd, path, &e) == 0, "%s", e.msg);
  int more;
  while ((more = pit_record_reader_next(&rd, &r, &e)) == 1) {
    CHECK(pit_runlog_add(&one, &r, &e) == 0, "%s", e.msg);
    pit_record_release(&r);
  }
  pit_record_reader_release(&rd);
  CHECK(one.ngens == log.ngens && one.nnodes == log.nnodes && one.ndec == log.ndec && one.niters == log.niters &&
            one.nckpt == log.nckpt && one.nrecords == log.nrecords,
        "one by one");
  CHECK(memcmp(one.gens, log.gens, (size_t)log.ngens * sizeof *log.gens) == 0, "same generations");
  CHECK(memcmp(one.nodes, log.nodes, (size_t)log.nnodes * sizeof *log.nodes) == 0, "same nodes");
  pit_runlog_release(&one);
  pit_runlog_release(&log);
}

static void synthetic(void) {
  struct pit_err e = {0};
  struct pit_runlog log;
  /* generation 0 fails (a rank died: no end record), a spot node is lost, generation 1 runs on */
  const char *failed =
      "{\"type\":\"node\",\"run\":\"s\",\"gen\":0,\"t\":0.1,\"action\":\"start\",\"node\":\"s.0\",\"itype\":\"m5@spot\",\"price_h\":0.03}\n"
      "{\"type\":\"node\",\"run\":\"s\",\"gen\":0,\"t\":0.2,\"action\":\"start\",\"node\":\"s.1\",\"itype\":\"m5@on-demand\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"s\",\"gen\":0,\"t\":0.3,\"action\":\"ready\",\"node\":\"s.0\",\"itype\":\"m5@spot\",\"price_h\":0.03}\n"
      "{\"type\":\"iter\",\"run\":\"s\",\"gen\":0,\"t\":1.0,\"epoch\":0,\"iter\":0,\"step\":0,\"batch\":8,\"step_s\":0.5}\n"
      "{\"type\":\"iter\",\"run\":\"s\",\"gen\":0,\"t\":1.5,\"epoch\":0,\"iter\":1,\"step\":1,\"batch\":8,\"step_s\":0.5}\n"
      "{\"type\":\"node\",\"run\":\"s\",\"gen\":0,\"t\":2.0,\"action\":\"lost\",\"node\":\"s.0\",\"itype\":\"m5@spot\",\"price_h\":0.03}\n"
      "\n"
      "{\"type\":\"iter\",\"run\":\"s\",\"gen\":1,\"t\":3.0,\"epoch\":0,\"iter\":0,\"step\":0,\"batch\":8,\"step_s\":0.5}\n"
      "{\"type\":\"decision\",\"run\":\"s\",\"gen\":1,\"t\":3.1,\"detail\":{\"what\":\"keep\",\"step\":1,\"why\":\"no saving\"}}\n";
  CHECK(load_text(&log, "failed.jsonl", failed, &e) == 0, "%s", e.msg);
  CHECK(log.ngens == 2 && isnan(log.gens[0].t_end) && log.gens[0].status[0] == '\0', "failed generation: no end");
  CHECK(log.gens[0].step_last == 1 && log.gens[1].step_first == 0, "redone steps");
  char m[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&log.gens[0].m, m, sizeof m);
  CHECK(strcmp(m, "m5@on-demand:1+m5@spot:1") == 0, "gen 0 membership %s", m);
  pit_membership_format(&log.gens[1].m, m, sizeof m);
  CHECK(strcmp(m, "m5@on-demand:1") == 0, "gen 1 membership (the lost node gone) %s", m);
  CHECK(log.nodes[0].lost && log.nodes[0].t_stop == 2.0 && log.nodes[0].market == PIT_MARKET_SPOT &&
            strcmp(log.nodes[0].base, "m5") == 0,
        "lost spot node");
  CHECK(log.nodes[1].market == PIT_MARKET_ON_DEMAND && isnan(log.nodes[1].t_stop) && isnan(log.nodes[1].t_ready),
        "on-demand node still up, never ready");
  CHECK(log.nup == 1 && !pit_runlog_finished(&log), "not finished");
  CHECK(log.ndec == 1 && strcmp(log.dec[0].d.kind, "keep") == 0 && log.dec[0].d.to.n == 0, "a keep");
  pit_runlog_release(&log);

  /* a live file: its last line is half-written */
  const char *live =
      "{\"type\":\"node\",\"run\":\"s\",\"gen\":0,\"t\":0.1,\"action\":\"start\",\"node\":\"s.0\",\"itype\":\"a\",\"price_h\":1}\n"
      "{\"type\":\"iter\",\"run\":\"s\",\"gen\":0,\"t\":1.0,\"epoch\":0,\"iter\":0,\"step\":0,\"batch\":8,\"step_s\":0.5}\n"
      "{\"type\":\"iter\",\"run\":\"s\",\"gen\":0,\"t\":1.5,\"epo";
  CHECK(load_text(&log, "live.jsonl", live, &e) == 0, "%s", e.msg);
  CHECK(log.truncated && log.niters == 1 && log.nrecords == 2, "truncated: %d, %lld", log.truncated,
        (long long)log.niters);
  pit_runlog_release(&log);

  /* a malformed complete line: file:line */
  const char *bad =
      "{\"type\":\"node\",\"run\":\"s\",\"gen\":0,\"t\":0.1,\"action\":\"start\",\"node\":\"s.0\",\"itype\":\"a\",\"price_h\":1}\n"
      "{\"type\":\"iter\",\"run\":\"s\",\"gen\":0,\"t\":1.5,\"epo\n"
      "{\"type\":\"iter\",\"run\":\"s\",\"gen\":0,\"t\":1.0,\"epoch\":0,\"iter\":0,\"step\":0,\"batch\":8,\"step_s\":0.5}\n";
  CHECK(load_text(&log, "bad.jsonl", bad, &e) == PIT_EFORMAT, "malformed line");
  CHECK(strstr(e.msg, "bad.jsonl:2:") != NULL, "message names file:line: %s", e.msg);
  pit_runlog_release(&log);

  const char *neg = "{\"type\":\"iter\",\"run\":\"s\",\"gen\":-3,\"t\":1.0,\"step\":0}\n";
  e = (struct pit_err){0};
  CHECK(load_text(&log, "neg.jsonl", neg, &e) < 0 && strstr(e.msg, "neg.jsonl:1:"), "generation < 0: %s", e.msg);
  pit_runlog_release(&log);

  e = (struct pit_err){0};
  CHECK(load_text(&log, "none/such.jsonl", "", &e) < 0, "missing file");
  pit_runlog_release(&log);
}

/* Generations with node records and no init or iteration record: gen 0 started
 * two nodes, failed before its first iteration, its node s.1 set aside (lost)
 * and replaced by s.2 in the same generation; gen 1 ran on s.0 and s.2; gen 2
 * (its controller's resize to one node: s.2 stopped, in gen 2) lost its
 * records; gen 3 ran on s.0, started by a controller that took the run over. */
static void no_init(void) {
  const char *text =
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":0,\"t\":0.1,\"action\":\"start\",\"node\":\"s.0\",\"itype\":\"c5\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":0,\"t\":0.2,\"action\":\"start\",\"node\":\"s.1\",\"itype\":\"m5\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":0,\"t\":0.3,\"action\":\"ready\",\"node\":\"s.0\",\"itype\":\"c5\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":0,\"t\":0.4,\"action\":\"ready\",\"node\":\"s.1\",\"itype\":\"m5\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":0,\"t\":2.0,\"action\":\"lost\",\"node\":\"s.1\",\"itype\":\"m5\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":0,\"t\":2.1,\"action\":\"start\",\"node\":\"s.2\",\"itype\":\"c5\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":0,\"t\":2.2,\"action\":\"ready\",\"node\":\"s.2\",\"itype\":\"c5\",\"price_h\":0.1}\n"
      "{\"type\":\"iter\",\"run\":\"n\",\"gen\":1,\"t\":3.0,\"epoch\":0,\"iter\":0,\"step\":0,\"batch\":8,\"step_s\":0.5}\n"
      "{\"type\":\"decision\",\"run\":\"n\",\"gen\":1,\"t\":3.1,\"detail\":{\"what\":\"remove\",\"step\":1}}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":2,\"t\":4.0,\"action\":\"stop\",\"node\":\"s.2\",\"itype\":\"c5\",\"price_h\":0.1}\n"
      "{\"type\":\"node\",\"run\":\"n\",\"gen\":3,\"t\":9.0,\"action\":\"ready\",\"node\":\"s.0\",\"itype\":\"c5\",\"price_h\":0.1,\"continued\":true}\n"
      "{\"type\":\"iter\",\"run\":\"n\",\"gen\":3,\"t\":9.5,\"epoch\":0,\"iter\":1,\"step\":1,\"batch\":8,\"step_s\":0.5}\n";
  struct pit_err e = {0};
  struct pit_runlog log;
  CHECK(load_text(&log, "no_init.jsonl", text, &e) == 0, "%s", e.msg);
  const char *want[4] = {"c5:1+m5:1", "c5:2", "c5:1", "c5:1"};
  CHECK(log.ngens == 4, "generations %d", log.ngens);
  for (int g = 0; g < log.ngens && g < 4; g++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&log.gens[g].m, m, sizeof m);
    CHECK(strcmp(m, want[g]) == 0, "gen %d membership '%s', want %s", g, m, want[g]);
  }
  /* taken from node records alone: not the membership an init or iteration record fixed */
  CHECK(!log.gens[0].have_m && log.gens[1].have_m && !log.gens[2].have_m && log.gens[3].have_m, "have_m");
  CHECK(!log.gens[0].continued && !log.gens[1].continued && !log.gens[2].continued && log.gens[3].continued,
        "gen 3 continued (its node record says so), no other");
  CHECK(log.nodes[0].adopted_gen == 3, "s.0 adopted in gen 3: %d", log.nodes[0].adopted_gen);
  pit_runlog_release(&log);
}

int main(void) {
  recorded_run();
  synthetic();
  no_init();
  return check_done();
}

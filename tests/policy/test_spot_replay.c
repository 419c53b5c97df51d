/* test_spot_replay.c — `pitstop run`'s spot market layer, the policy's side
 * (src/policy/policy_spot_replay.c):
 *  - a spot decision's inputs written as JSON and read back are the same inputs,
 *    to the bit (random states, every policy and mode, NaN where live runs have
 *    it), so a replay decides on what the run decided on;
 *  - a malformed record is refused with one error naming the key (each key
 *    removed in turn, a wrong type, an unknown name); infinities and a buffer too
 *    small are refused when writing;
 *  - a running job is never made idle (on-demand instead), an idle one may be;
 *  - pit_replay_spot over an events file: a decision with inputs decided again
 *    (the same, or found to differ when its recorded choice is changed), one
 *    without inputs followed, a malformed one refused naming the file, the step
 *    and the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "pitstop/policy.h"

static const char *keys[] = {"policy",    "running",         "spot_avail", "mode",         "t_h",
                             "done_h",    "job_h",           "deadline_h", "restart_h",    "tick_h",
                             "overhead_left_h", "price_h",   "spot_price_h", "avail_seen", "run_seen_h",
                             "spot_share", "avail_for_h"};

static int same_num(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int same_in(const struct pit_spot_in *a, const struct pit_spot_in *b) {
  const struct pit_spot_state *x = &a->s, *y = &b->s;
  return a->policy == b->policy && a->running == b->running && x->spot_avail == y->spot_avail &&
         x->mode == y->mode && same_num(x->t_h, y->t_h) && same_num(x->done_h, y->done_h) &&
         same_num(x->job_h, y->job_h) && same_num(x->deadline_h, y->deadline_h) &&
         same_num(x->restart_h, y->restart_h) && same_num(x->tick_h, y->tick_h) &&
         same_num(x->overhead_left_h, y->overhead_left_h) && same_num(x->price_h, y->price_h) &&
         same_num(x->spot_price_h, y->spot_price_h) && same_num(x->avail_seen, y->avail_seen) &&
         same_num(x->run_seen_h, y->run_seen_h) && same_num(x->spot_share, y->spot_share) &&
         same_num(x->avail_for_h, y->avail_for_h);
}

static struct pit_spot_in random_in(void) {
  struct pit_spot_in in = {.policy = (enum pit_spot_policy)(int)(check_urand() * PIT_SPOT_NPOLICIES),
                           .running = check_urand() < 0.5};
  struct pit_spot_state *s = &in.s;
  s->job_h = check_urand() / 3;
  s->done_h = s->job_h * check_urand();
  s->deadline_h = s->job_h * (1 + 2 * check_urand());
  s->t_h = s->deadline_h * check_urand();
  s->restart_h = check_urand() / 700;
  s->tick_h = check_urand() / 300;
  s->spot_avail = check_urand() < 0.6;
  s->mode = (enum pit_spot_mode)(int)(check_urand() * 3);
  s->overhead_left_h = check_urand() < 0.5 ? 0 : s->restart_h * check_urand();
  s->price_h = 0.085;
  s->spot_price_h = 0.035 * check_urand();
  s->avail_seen = check_urand();
  s->run_seen_h = check_urand() / 1000;
  s->spot_share = check_urand() < 0.5 ? 1 : check_urand();
  s->avail_for_h = check_urand() < 0.3 ? NAN : check_urand() / 100; /* live: NaN while no spot node is held */
  return in;
}

/* One decision record line of run "t" into f: detail from d (policy spot). */
static void put_decision(FILE *f, double t, int64_t step, const char *mode, const char *inputs) {
  struct pit_decision d;
  struct pit_err e = {0};
  pit_decision_init(&d);
  snprintf(d.kind, sizeof d.kind, "%s", mode);
  d.step = step;
  snprintf(d.policy, sizeof d.policy, "spot");
  snprintf(d.action, sizeof d.action, "market");
  if (mode[0])
    snprintf(d.spot_mode, sizeof d.spot_mode, "%s", mode);
  d.inputs = inputs ? strdup(inputs) : NULL;
  char *txt = NULL;
  CHECK(pit_decision_encode(&d, &txt, &e) == 0, "%s", e.msg);
  fprintf(f, "{\"type\":\"decision\",\"run\":\"t\",\"gen\":0,\"t\":%g,\"step\":%lld,\"detail\":%s}\n", t,
          (long long)step, txt ? txt : "{}");
  free(txt);
  pit_decision_release(&d);
}

int main(void) {
  struct pit_err e = {0};
  char buf[2048];
  check_rng = 29;

  /* round trip, to the bit */
  int n_idle = 0, n_nan = 0;
  for (int i = 0; i < 500; i++) {
    struct pit_spot_in in = random_in(), back;
    CHECK(pit_spot_in_json(&in, buf, sizeof buf, &e) == 0, "%s", e.msg);
    CHECK(pit_spot_in_parse(&back, buf, &e) == 0, "%s: %s", e.msg, buf);
    CHECK(same_in(&in, &back), "read back the same: %s", buf);
    CHECK(pit_spot_in_decide(&in) == pit_spot_in_decide(&back), "the same choice: %s", buf);
    enum pit_spot_mode to = pit_spot_decide(in.policy, &in.s);
    n_idle += to == PIT_SPOT_IDLE;
    n_nan += isnan(in.s.avail_for_h);
    CHECK(pit_spot_in_decide(&in) == (in.running && to == PIT_SPOT_IDLE ? PIT_SPOT_OD : to),
          "idle turned on-demand only while running: %s", buf);
  }
  CHECK(n_idle > 10 && n_nan > 50, "the random states reach idle (%d) and an unknown age (%d)", n_idle, n_nan);

  /* a state where the policy waits: idle when the job does not run, on-demand when it does */
  struct pit_spot_in w = {.policy = PIT_SPOT_PITSTOP, .running = 0,
                          .s = {.t_h = 0.01, .done_h = 0.01, .job_h = 0.1, .deadline_h = 1, .restart_h = 0.001,
                                .tick_h = 0.001, .spot_avail = 0, .mode = PIT_SPOT_IDLE, .price_h = 0.085,
                                .spot_price_h = 0.035, .avail_seen = 0.9, .run_seen_h = 0.01, .spot_share = 1,
                                .avail_for_h = NAN}};
  CHECK(pit_spot_in_decide(&w) == PIT_SPOT_IDLE, "plenty of slack, spot away: wait");
  w.running = 1;
  CHECK(pit_spot_in_decide(&w) == PIT_SPOT_OD, "a running job is never made idle");

  /* every key required: each one removed in turn is named */
  CHECK(pit_spot_in_json(&w, buf, sizeof buf, &e) == 0, "%s", e.msg);
  CHECK(strstr(buf, "\"avail_for_h\":null") != NULL, "NaN written null: %s", buf);
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    cJSON *o = cJSON_Parse(buf);
    CHECK(cJSON_GetObjectItemCaseSensitive(o, keys[k]) != NULL, "the inputs hold \"%s\": %s", keys[k], buf);
    cJSON_DeleteItemFromObjectCaseSensitive(o, keys[k]);
    char *txt = cJSON_PrintUnformatted(o);
    char want[64];
    snprintf(want, sizeof want, "\"%s\" is missing", keys[k]);
    struct pit_spot_in back;
    struct pit_err e2 = {0};
    CHECK(pit_spot_in_parse(&back, txt, &e2) == PIT_EFORMAT && strstr(e2.msg, want), "without %s: '%s'", keys[k],
          e2.msg);
    free(txt);
    cJSON_Delete(o);
  }
  cJSON *o = cJSON_Parse(buf);
  CHECK(o && cJSON_GetArraySize(o) == (int)(sizeof keys / sizeof *keys), "no key beyond those listed: %s", buf);
  cJSON_Delete(o);
  /* wrong types and names, each named */
  struct {
    const char *from, *to, *key;
  } bad[] = {{"\"tick_h\":", "\"tick_h\":\"x\",\"no\":", "\"tick_h\" is not a number or null"},
             {"\"mode\":\"idle\"", "\"mode\":\"cheap\"", "\"mode\" is 'cheap', not one of its names"},
             {"\"running\":1", "\"running\":2", "\"running\" is not 0 or 1"},
             {"\"policy\":\"pitstop\"", "\"policy\":7", "\"policy\" is missing"}};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    char txt[2048];
    const char *at = strstr(buf, bad[k].from);
    CHECK(at != NULL, "%s in %s", bad[k].from, buf);
    if (!at)
      continue;
    snprintf(txt, sizeof txt, "%.*s%s%s", (int)(at - buf), buf, bad[k].to, at + strlen(bad[k].from));
    struct pit_spot_in back;
    struct pit_err e2 = {0};
    CHECK(pit_spot_in_parse(&back, txt, &e2) == PIT_EFORMAT && strstr(e2.msg, bad[k].key), "%s: '%s'", txt, e2.msg);
  }
  struct pit_spot_in scratch;
  CHECK(pit_spot_in_parse(&scratch, "[1]", &e) == PIT_EFORMAT && strstr(e.msg, "not a JSON object"), "%s", e.msg);
  /* writing: too small, or an infinity */
  struct pit_spot_in inf = w;
  CHECK(pit_spot_in_json(&inf, buf, 40, &e) == PIT_EARG, "a buffer too small refused");
  inf.s.deadline_h = INFINITY;
  CHECK(pit_spot_in_json(&inf, buf, sizeof buf, &e) == PIT_EARG && strstr(e.msg, "infinite"), "%s", e.msg);

  /* the replay over an events file */
  char path[512], in1[2048], in2[2048];
  snprintf(path, sizeof path, "%s/events.jsonl", check_tmpdir());
  struct pit_spot_in a = w, b = w;
  a.running = 0; /* idle */
  b.s.spot_avail = 1, b.s.mode = PIT_SPOT_SPOT, b.s.t_h = 0.02; /* keep spot */
  CHECK(pit_spot_in_json(&a, in1, sizeof in1, &e) == 0 && pit_spot_in_json(&b, in2, sizeof in2, &e) == 0, "%s",
        e.msg);
  CHECK(pit_spot_in_decide(&b) == PIT_SPOT_SPOT, "spot kept");
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "%s", path);
  if (!f)
    return check_done();
  put_decision(f, 0.1, 0, "", NULL);            /* recorded before the inputs were: followed */
  put_decision(f, 0.2, 0, "spot", NULL);        /* nothing measured yet: followed */
  put_decision(f, 5.0, 20, "idle", in1);        /* decided again: the same */
  put_decision(f, 9.0, 40, "on_demand", in2);   /* decided again: spot, not what the record says */
  put_decision(f, 12.0, 60, "spot", in2);       /* decided again: the same */
  fclose(f);
  struct pit_runlog log;
  pit_runlog_init(&log);
  CHECK(pit_runlog_load(&log, path, &e) == 0, "%s", e.msg);
  struct pit_spot_replay r;
  CHECK(pit_replay_spot(&log, path, &r, &e) == 0, "%s", e.msg);
  CHECK(r.n == 5 && r.followed == 2 && r.again == 3 && r.same == 2 && r.ndiff == 1, "n %d followed %d again %d same %d",
        r.n, r.followed, r.again, r.same);
  CHECK(r.diff[0].step == 40 && r.diff[0].t == 9.0 && r.diff[0].recorded == PIT_SPOT_OD &&
            r.diff[0].again == PIT_SPOT_SPOT,
        "the one that differs: step %lld", (long long)r.diff[0].step);
  pit_runlog_release(&log);

  /* a malformed record: one error naming the file, the step and the key */
  char *cut = strstr(in2, ",\"restart_h\":");
  char *next = cut ? strchr(cut + 1, ',') : NULL;
  CHECK(cut && next, "%s", in2);
  if (cut && next)
    memmove(cut, next, strlen(next) + 1);
  f = fopen(path, "w");
  put_decision(f, 9.0, 40, "spot", in2);
  fclose(f);
  pit_runlog_init(&log);
  CHECK(pit_runlog_load(&log, path, &e) == 0, "%s", e.msg);
  CHECK(pit_replay_spot(&log, path, &r, &e) == PIT_EFORMAT && strstr(e.msg, path) && strstr(e.msg, "step 40") &&
            strstr(e.msg, "\"restart_h\" is missing"),
        "'%s'", e.msg);
  pit_runlog_release(&log);
  return check_done();
}

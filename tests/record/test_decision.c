/* test_decision.c — the one decision-record struct: encode → decode round trip
 * (every field: alternatives with their intervals and models, shares, reasons, the
 * controller's policy, action, from and to), a batch-shares decision and a
 * controller's encoded with the keys in the order each has always been written,
 * the spot market layer's choice (spot_mode) and a cost decision's settings read back, and malformed
 * details refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/record.h"

int main(void) {
  struct pit_err e = {0};
  struct pit_decision d, back;
  pit_decision_init(&d);
  pit_decision_init(&back);

  /* a batch-shares decision, as train/shares.c fills it */
  snprintf(d.kind, sizeof d.kind, "batch_shares");
  d.step = 20;
  CHECK(pit_decision_set_ranks(&d, 2, 1) == 0, "ranks");
  d.shares[0] = 40, d.shares[1] = 24;
  d.previous[0] = 32, d.previous[1] = 32;
  d.speed_sps[0] = 100.5, d.speed_sps[1] = 60.2;
  d.predicted_step_s = 0.2;
  d.previous_predicted_step_s = 0.318;
  d.reason = strdup("auto: shares proportional to the measured speeds");
  char *txt = NULL;
  CHECK(pit_decision_encode(&d, &txt, &e) == 0, "%s", e.msg);
  const char *want = "{\"what\":\"batch_shares\",\"step\":20,\"shares\":[40,24],\"previous\":[32,32],"
                     "\"speed_sps\":[100.5,60.2],\"predicted_step_s\":0.2,\"previous_predicted_step_s\":0.318,"
                     "\"why\":\"auto: shares proportional to the measured speeds\"}";
  CHECK(txt && strcmp(txt, want) == 0, "batch shares encoded as before:\n%s\n%s", txt, want);
  CHECK(pit_decision_decode(&back, txt, &e) == 0, "%s", e.msg);
  CHECK(strcmp(back.kind, "batch_shares") == 0 && back.step == 20 && back.nshares == 2 && back.shares[1] == 24 &&
            back.previous[0] == 32 && back.speed_sps[1] == 60.2 && back.predicted_step_s == 0.2 &&
            back.previous_predicted_step_s == 0.318 && back.reason && strstr(back.reason, "measured") &&
            back.nalts == 0,
        "batch shares round trip");
  free(txt);
  pit_decision_release(&d);

  /* a controller's decision: every field set, encoded once and decoded equal */
  struct pit_membership m1, m2;
  CHECK(pit_membership_parse(&m1, "c5.xlarge:2", &e) == 0 && pit_membership_parse(&m2, "c5.xlarge:2+c5.2xlarge@spot:1", &e) == 0,
        "%s", e.msg);
  snprintf(d.kind, sizeof d.kind, "add");
  d.step = 400;
  d.reason = strdup("predicted saving 12.5 USD exceeds the switching cost 0.4 USD");
  snprintf(d.policy, sizeof d.policy, "cost");
  snprintf(d.action, sizeof d.action, "resize");
  d.from = m1;
  d.to = m2;
  struct pit_decision_alt *a0 = pit_decision_add_alt(&d, &m2), *a1 = pit_decision_add_alt(&d, &m1),
                          *a2 = pit_decision_add_alt(&d, NULL);
  CHECK(a0 && a1 && a2, "alts");
  a0 = &d.alts[0], a1 = &d.alts[1];
  a0->predicted_s = 2400.5, a0->cost = 1.3, a0->pit_s = 0.25, a0->pit_lo = 0.2, a0->pit_hi = INFINITY;
  a0->predicted_lo = 2000.125, a0->predicted_hi = 3000.75, a0->fits = 1;
  snprintf(a0->what, sizeof a0->what, "add");
  snprintf(a0->model, sizeof a0->model, "USL");
  a1->predicted_s = 3600.25, a1->cost = 1.7, a1->pit_s = NAN, a1->pit_lo = NAN, a1->pit_hi = 0.5;
  a1->predicted_lo = 3500, a1->predicted_hi = 3700, a1->fits = 0;
  snprintf(a1->what, sizeof a1->what, "keep");
  snprintf(a1->model, sizeof a1->model, "measured (25 iterations)");
  CHECK(pit_decision_encode(&d, &txt, &e) == 0, "%s", e.msg);
  CHECK(pit_decision_decode(&back, txt, &e) == 0, "%s: %s", e.msg, txt);
  CHECK(pit_decision_equal(&d, &back), "controller decision round trip, every field: %s", txt);
  CHECK(back.to.n == 2 && back.to.m[0].nodes == 1 && strcmp(back.alts[0].model, "USL") == 0 &&
            isinf(back.alts[0].pit_hi) && isnan(back.alts[1].pit_s) && back.alts[1].fits == 0 &&
            back.alts[2].m.n == 0 && isnan(back.alts[2].cost) && back.alts[2].fits == -1 && !back.alts[2].what[0],
        "fields read back: %s", txt);
  const char *want2 = "{\"what\":\"add\",\"step\":400,\"alternatives\":[{\"membership\":\"c5.2xlarge@spot:1+c5.xlarge:2\","
                      "\"predicted_s\":2400.5,\"cost\":1.3,\"what\":\"add\",\"model\":\"USL\",\"pit_s\":0.25,"
                      "\"pit_interval_s\":[0.2,-1],\"predicted_interval_s\":[2000.125,3000.75],\"fits\":true},"
                      "{\"membership\":\"c5.xlarge:2\",\"predicted_s\":3600.25,\"cost\":1.7,\"what\":\"keep\","
                      "\"model\":\"measured (25 iterations)\",\"pit_s\":null,\"pit_interval_s\":[null,0.5],"
                      "\"predicted_interval_s\":[3500,3700],\"fits\":false},{\"membership\":\"\"}],"
                      "\"why\":\"predicted saving 12.5 USD exceeds the switching cost 0.4 USD\",\"policy\":\"cost\","
                      "\"action\":\"resize\",\"from\":\"c5.xlarge:2\",\"to\":\"c5.2xlarge@spot:1+c5.xlarge:2\"}";
  CHECK(strcmp(txt, want2) == 0, "the controller's keys in the order it has always written them:\n%s\n%s", txt, want2);
  /* each field matters: one changed makes them differ */
  back.alts[0].predicted_hi = 3000.5;
  CHECK(!pit_decision_equal(&d, &back), "equal sees an interval's end");
  back.alts[0].predicted_hi = 3000.75;
  back.to.m[0].nodes = 3;
  CHECK(!pit_decision_equal(&d, &back), "equal sees the membership decided");
  free(txt);
  /* a spot market layer's choice and the state it was decided on: after "to", read back equal */
  snprintf(d.spot_mode, sizeof d.spot_mode, "on_demand");
  d.inputs = strdup("{\"policy\":\"pitstop\",\"t_h\":0.25}");
  CHECK(pit_decision_encode(&d, &txt, &e) == 0, "%s", e.msg);
  CHECK(txt && strstr(txt, "\"to\":\"c5.2xlarge@spot:1+c5.xlarge:2\",\"spot_mode\":\"on_demand\",\"inputs\":{"),
        "spot_mode after to, before inputs: %s", txt);
  CHECK(pit_decision_decode(&back, txt, &e) == 0 && pit_decision_equal(&d, &back) &&
            strcmp(back.spot_mode, "on_demand") == 0,
        "spot_mode round trip: %s", txt);
  back.spot_mode[0] = 0;
  CHECK(!pit_decision_equal(&d, &back), "equal sees spot_mode");
  free(txt);
  /* a cost decision's settings (a replay takes what it is not told from them): round trip, after spot_mode */
  d.set_deadline_s = 19;
  d.set_nmin = 1, d.set_nmax = 2;
  snprintf(d.set_types, sizeof d.set_types, "local-1,local-0.4");
  CHECK(pit_decision_encode(&d, &txt, &e) == 0, "%s", e.msg);
  CHECK(txt && strstr(txt, "\"spot_mode\":\"on_demand\",\"settings\":{\"deadline_s\":19,\"nnodes\":[1,2],"
                           "\"types\":\"local-1,local-0.4\"},\"inputs\""),
        "settings, no budget: %s", txt);
  CHECK(pit_decision_decode(&back, txt, &e) == 0 && pit_decision_equal(&d, &back) && back.set_nmax == 2 &&
            isnan(back.set_budget) && back.set_deadline_s == 19,
        "settings round trip: %s", txt);
  back.set_nmax = 0;
  CHECK(!pit_decision_equal(&d, &back), "equal sees the node bounds");
  free(txt);
  pit_decision_release(&d);

  /* malformed details: refused with the reason, the struct left empty */
  const char *bad[] = {"", "[1,2]", "{\"what\":3}", "{\"shares\":[1,\"x\"]}", "{\"shares\":[1,2],\"previous\":[1]}",
                       "{\"previous\":[1]}", "{\"alternatives\":{}}", "{\"step\":\"ten\"}",
                       "{\"to\":\"c5.large:x\"}", "{\"alternatives\":[{\"pit_interval_s\":[1]}]}",
                       "{\"alternatives\":[{\"fits\":1}]}", "{\"policy\":\"a name longer than thirty-one bytes\"}",
                       "{\"spot_mode\":2}", "{\"policy\":\"cost\",\"settings\":[]}",
                       "{\"settings\":{\"nnodes\":[0,2]}}", "{\"settings\":{\"nnodes\":[1]}}",
                       "{\"settings\":{\"deadline_s\":\"soon\"}}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CHECK(pit_decision_decode(&back, bad[i], &e) == PIT_EFORMAT && back.nshares == 0 && !back.reason,
          "'%s' refused (%s)", bad[i], e.msg);
  }
  /* unknown keys are ignored */
  CHECK(pit_decision_decode(&back, "{\"what\":\"keep\",\"by\":\"policy v2\"}", &e) == 0 &&
            strcmp(back.kind, "keep") == 0 && back.step == -1,
        "%s", e.msg);
  pit_decision_release(&back);
  return check_done();
}

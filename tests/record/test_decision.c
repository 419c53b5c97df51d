/* test_decision.c — the one decision-record struct: encode → decode round trip
 * (alternatives, shares, reasons), a batch-shares decision encoded with the keys in
 * the order `pitstop train` has always written them, and malformed details refused. */
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

  /* a controller's decision: alternatives with membership, predicted time and cost */
  snprintf(d.kind, sizeof d.kind, "add");
  d.step = 400;
  d.reason = strdup("predicted saving 12.5 USD exceeds the switching cost 0.4 USD");
  CHECK(pit_decision_add_alt(&d, "c5.xlarge:2", 3600.25, 1.7) == 0 &&
            pit_decision_add_alt(&d, "c5.xlarge:2+c5.2xlarge:1", 2400.5, 1.3) == 0 &&
            pit_decision_add_alt(&d, NULL, NAN, NAN) == 0,
        "alts");
  CHECK(pit_decision_encode(&d, &txt, &e) == 0, "%s", e.msg);
  CHECK(pit_decision_decode(&back, txt, &e) == 0, "%s: %s", e.msg, txt);
  CHECK(strcmp(back.kind, "add") == 0 && back.step == 400 && back.nalts == 3 && back.nshares == 0 &&
            !back.shares && strcmp(back.alts[1].membership, "c5.xlarge:2+c5.2xlarge:1") == 0 &&
            back.alts[1].predicted_s == 2400.5 && back.alts[0].cost == 1.7 && !back.alts[2].membership &&
            isnan(back.alts[2].cost) && isnan(back.predicted_step_s),
        "controller decision round trip: %s", txt);
  CHECK(!strstr(txt, "shares") && !strstr(txt, "null"), "absent fields are left out: %s", txt);
  free(txt);
  pit_decision_release(&d);

  /* malformed details: refused with the reason, the struct left empty */
  const char *bad[] = {"", "[1,2]", "{\"what\":3}", "{\"shares\":[1,\"x\"]}", "{\"shares\":[1,2],\"previous\":[1]}",
                       "{\"previous\":[1]}", "{\"alternatives\":{}}", "{\"step\":\"ten\"}"};
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

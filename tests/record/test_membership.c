/* test_membership.c — struct pit_membership (record.h): the text form parses
 * into a canonical list (order and repeats do not matter, equal memberships
 * have equal texts), totals, the JSON form round-trips through a config object,
 * and bad texts or JSON are refused with a message quoting them. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/record.h"

static void text_form(void) {
  struct pit_membership a, b;
  struct pit_err e = {0};
  char buf[PIT_MEMBERSHIP_TEXT_MAX];
  CHECK(pit_membership_parse(&a, "m5.large:2+c5.xlarge:1x4", &e) == 0, "parse: %s", e.msg);
  CHECK(a.n == 2 && strcmp(a.m[0].itype, "c5.xlarge") == 0 && a.m[0].nodes == 1 && a.m[0].ranks_per_node == 4 &&
            strcmp(a.m[1].itype, "m5.large") == 0 && a.m[1].nodes == 2 && a.m[1].ranks_per_node == -1,
        "entries sorted by type");
  pit_membership_format(&a, buf, sizeof buf);
  CHECK(strcmp(buf, "c5.xlarge:1x4+m5.large:2") == 0, "canonical text '%s'", buf);
  CHECK(pit_membership_nodes(&a) == 3 && pit_membership_ranks(&a) == -1, "totals with an unknown rank count");
  CHECK(pit_membership_parse(&b, " c5.xlarge:1x4 + m5.large + m5.large:1", &e) == 0, "parse: %s", e.msg);
  CHECK(pit_membership_equal(&a, &b), "order, spaces and repeated types do not matter");
  pit_membership_format(&b, buf, sizeof buf);
  CHECK(strcmp(buf, "c5.xlarge:1x4+m5.large:2") == 0, "same key '%s'", buf);
  CHECK(pit_membership_parse(&b, "c5.xlarge:1x4+m5.large:3", &e) == 0 && !pit_membership_equal(&a, &b),
        "different node count differs");
  CHECK(pit_membership_parse(&b, "m5.large:2x1+m5.large:1x2", &e) == 0 && b.n == 2 && pit_membership_nodes(&b) == 3 &&
            pit_membership_ranks(&b) == 4,
        "one type at two rank counts: two entries, totals %d nodes %d ranks", pit_membership_nodes(&b),
        pit_membership_ranks(&b));

  const char *bad[][2] = {{"", "without an instance type"},
                          {"a:0", "'a:0' is not TYPE:NODES"},
                          {"a:2x", "'a:2x' is not"},
                          {":3", "without an instance type"},
                          {"a b:1", "'a b' is not a name"},
                          {"a:1+", "without an instance type"},
                          {"a:-1", "is not TYPE:NODES"},
                          {"a:1+b:1+c:1+d:1+e:1+f:1+g:1+h:1+i:1", "at most 8 entries"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&e, 0, sizeof e);
    int rc = pit_membership_parse(&b, bad[i][0], &e);
    CHECK(rc == PIT_EARG && strstr(e.msg, bad[i][1]) && strstr(e.msg, "membership '") && b.n == 0,
          "bad '%s': %d '%s'", bad[i][0], rc, e.msg);
  }
}

static void json_form(void) {
  struct pit_membership a, b;
  struct pit_err e = {0};
  CHECK(pit_membership_parse(&a, "m5.large:2x1+c5.xlarge:1", &e) == 0, "parse: %s", e.msg);
  char *js = pit_membership_json(&a);
  CHECK(js && strcmp(js, "[{\"itype\":\"c5.xlarge\",\"nodes\":1},{\"itype\":\"m5.large\",\"nodes\":2,\"ranks_per_node\":1}]") == 0,
        "json '%s'", js ? js : "(null)");
  char cfg[512];
  snprintf(cfg, sizeof cfg, "{\"model\":\"cnn\",\"membership\":%s}", js);
  free(js);
  CHECK(pit_membership_from_config(&b, cfg, &e) == 0 && pit_membership_equal(&a, &b), "json round trip: %s", e.msg);
  CHECK(pit_membership_from_config(&b, "{\"membership\":\"c5.xlarge:1+m5.large:2x1\"}", &e) == 0 &&
            pit_membership_equal(&a, &b),
        "text form inside the config: %s", e.msg);
  CHECK(pit_membership_from_config(&b, "{\"model\":\"cnn\"}", &e) == 0 && b.n == 0, "absent: empty");
  CHECK(pit_membership_from_config(&b, NULL, &e) == 0 && b.n == 0, "no config: empty");
  const char *bad[] = {"{\"membership\":[]}", "{\"membership\":[{\"itype\":\"a\"}]}",
                       "{\"membership\":[{\"itype\":\"a\",\"nodes\":0}]}",
                       "{\"membership\":[{\"itype\":\"a\",\"nodes\":1.5}]}",
                       "{\"membership\":[{\"itype\":\"a\",\"nodes\":1,\"ranks_per_node\":0}]}",
                       "{\"membership\":[{\"itype\":\"a:b\",\"nodes\":1}]}", "{\"membership\":7}",
                       "{\"membership\":\"a:0\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&e, 0, sizeof e);
    CHECK(pit_membership_from_config(&b, bad[i], &e) == PIT_EFORMAT && e.msg[0] && b.n == 0, "bad json %s: '%s'",
          bad[i], e.msg);
  }
}

/* The market is a field of an entry: TYPE@spot read and written at the edge
 * (text, JSON), the canonical order that of the names, a bare type name
 * without '@'. */
static void markets(void) {
  struct pit_err e = {0};
  struct pit_membership a, b;
  CHECK(pit_membership_parse(&a, "c5.large@spot:2+c5.large-x:1+c5.large:1+c5.large@on-demand:1", &e) == 0, "%s",
        e.msg);
  char t[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&a, t, sizeof t);
  /* sorted as the names TYPE[@MARKET] sort, as when the market was part of the type string */
  CHECK(strcmp(t, "c5.large:1+c5.large-x:1+c5.large@on-demand:1+c5.large@spot:2") == 0, "canonical %s", t);
  CHECK(a.n == 4 && strcmp(a.m[3].itype, "c5.large") == 0 && a.m[3].market == PIT_MARKET_SPOT && a.m[3].nodes == 2 &&
            a.m[2].market == PIT_MARKET_ON_DEMAND && a.m[0].market == PIT_MARKET_DEFAULT,
        "markets as fields");
  pit_membership_clear(&b);
  CHECK(pit_membership_add_on(&b, "c5.large", PIT_MARKET_SPOT, 2, -1, &e) == 0 &&
            pit_membership_add(&b, "c5.large-x", 1, -1, &e) == 0 && pit_membership_add(&b, "c5.large", 1, -1, &e) == 0 &&
            pit_membership_add_on(&b, "c5.large", PIT_MARKET_ON_DEMAND, 1, -1, &e) == 0 && pit_membership_equal(&a, &b),
        "the same membership built by fields: %s", e.msg);
  b.m[3].market = PIT_MARKET_ON_DEMAND;
  CHECK(!pit_membership_equal(&a, &b), "a market differs: not equal");
  CHECK(pit_membership_add(&b, "c5.large@spot", 1, -1, &e) == PIT_EARG, "a type name holds no market");
  char *js = pit_membership_json(&a);
  CHECK(js && strstr(js, "\"itype\":\"c5.large@spot\",\"nodes\":2"), "JSON form %s", js ? js : "");
  char cfg[600];
  snprintf(cfg, sizeof cfg, "{\"membership\":%s}", js ? js : "[]");
  free(js);
  CHECK(pit_membership_from_config(&b, cfg, &e) == 0 && pit_membership_equal(&a, &b), "JSON form read back: %s", e.msg);
  char it[PIT_NAME_MAX];
  enum pit_market mk;
  CHECK(pit_itype_market_parse("m5@on-demand", it, sizeof it, &mk, &e) == 0 && strcmp(it, "m5") == 0 &&
            mk == PIT_MARKET_ON_DEMAND,
        "parse");
  CHECK(pit_itype_market_parse("m5@cheap", it, sizeof it, &mk, &e) == PIT_EARG && strstr(e.msg, "TYPE@spot"), "%s",
        e.msg);
  CHECK(pit_itype_market_parse("@spot", it, sizeof it, &mk, &e) == PIT_EARG, "no type");
  pit_itype_market_format("m5", PIT_MARKET_SPOT, t, sizeof t);
  CHECK(strcmp(t, "m5@spot") == 0, "format %s", t);
}

int main(void) {
  text_form();
  json_form();
  markets();
  return check_done();
}

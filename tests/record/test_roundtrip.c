/* test_roundtrip.c — records survive format → parse unchanged; malformed lines
 * are rejected with file:line; absent fields stay absent. A node record's market
 * and zone survive too, and the run log's fold takes them (an old file's
 * TYPE@spot still names the market; a bare type without "market" is DEFAULT), and so
 * does a start record's "catalog" row (absent in old files; out of range: refused)
 * and a node record's "continued" (written only when true; not a boolean: refused). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/record.h"

static void roundtrip_iter(void) {
  struct pit_record r, q;
  pit_record_init(&r);
  pit_record_init(&q);
  r.type = PIT_REC_ITER;
  snprintf(r.run, sizeof r.run, "run-\"1\"");
  r.gen = 2;
  r.t = 12.345678901;
  r.epoch = 1;
  r.iter = 7;
  r.step = 107;
  r.batch = 64;
  r.step_s = 0.0123456789;
  r.data_s = 0.0001;
  pit_record_set_ranks(&r, 3);
  for (int i = 0; i < 3; i++) {
    r.compute_s[i] = 0.01 * (i + 1);
    r.wait_s[i] = 0.002 * i;
  }
  r.nlosses = 2;
  strcpy(r.loss_name[0], "d");
  strcpy(r.loss_name[1], "g");
  r.loss_val[0] = 1.25;
  r.loss_val[1] = 0.5;
  char *buf = NULL;
  size_t cap = 0;
  int n = pit_record_format(&r, &buf, &cap);
  CHECK(n > 0 && buf[n - 1] == '\n', "format returned %d", n);
  struct pit_err e = {0};
  CHECK(pit_record_parse(&q, buf, (size_t)n - 1, &e) == 0, "parse: %s", e.msg);
  CHECK(q.type == PIT_REC_ITER && strcmp(q.run, r.run) == 0 && q.gen == 2, "header");
  CHECK(q.epoch == 1 && q.iter == 7 && q.step == 107 && q.batch == 64, "counters");
  CHECK(q.nranks == 3 && fabs(q.compute_s[2] - 0.03) < 1e-12 && fabs(q.wait_s[1] - 0.002) < 1e-12, "ranks");
  CHECK(fabs(q.step_s - r.step_s) < 1e-12 && fabs(q.t - r.t) < 1e-8, "times");
  CHECK(q.nlosses == 2 && strcmp(q.loss_name[1], "g") == 0 && q.loss_val[0] == 1.25, "losses");
  CHECK(isnan(q.loss) && isnan(q.accuracy) && q.bytes == -1 && q.config == NULL, "absent stays absent");
  pit_record_release(&r);
  pit_record_release(&q);
  free(buf);
}

/* A node record of the command provider: its market and zone, as the controller writes them. */
static void roundtrip_node(void) {
  struct pit_record r, q;
  pit_record_init(&r);
  pit_record_init(&q);
  r.type = PIT_REC_NODE;
  snprintf(r.run, sizeof r.run, "z1");
  r.gen = 1;
  r.t = 3.5;
  snprintf(r.action, sizeof r.action, "start");
  snprintf(r.node, sizeof r.node, "i-0001");
  snprintf(r.itype, sizeof r.itype, "c5.large");
  r.price_h = 0.035;
  r.market = PIT_MARKET_SPOT;
  snprintf(r.zone, sizeof r.zone, "us-east-1b");
  char *buf = NULL;
  size_t cap = 0;
  int n = pit_record_format(&r, &buf, &cap);
  CHECK(n > 0 && strstr(buf, "\"market\":\"spot\"") && strstr(buf, "\"zone\":\"us-east-1b\""), "written: %s", buf);
  struct pit_err e = {0};
  CHECK(pit_record_parse(&q, buf, (size_t)n - 1, &e) == 0, "parse: %s", e.msg);
  CHECK(q.type == PIT_REC_NODE && q.market == PIT_MARKET_SPOT && strcmp(q.zone, "us-east-1b") == 0 &&
            strcmp(q.itype, "c5.large") == 0 && q.price_h == 0.035 && strcmp(q.action, "start") == 0,
        "node read back: market %d zone '%s' itype '%s'", (int)q.market, q.zone, q.itype);
  r.market = PIT_MARKET_ON_DEMAND;
  r.zone[0] = 0;
  n = pit_record_format(&r, &buf, &cap);
  CHECK(n > 0 && strstr(buf, "\"market\":\"on-demand\"") && !strstr(buf, "\"zone\""), "no zone written: %s", buf);
  CHECK(pit_record_parse(&q, buf, (size_t)n - 1, &e) == 0 && q.market == PIT_MARKET_ON_DEMAND && !q.zone[0],
        "on-demand, no zone");
  r.market = PIT_MARKET_DEFAULT; /* a local node: neither written */
  n = pit_record_format(&r, &buf, &cap);
  CHECK(n > 0 && !strstr(buf, "market") && !strstr(buf, "zone"), "local node: %s", buf);
  CHECK(!q.row.have, "no catalog row written, none read");
  r.row = (struct pit_rec_itype){1, 2, -1, 0.085, 0.035, 1, 60, NAN};
  n = pit_record_format(&r, &buf, &cap);
  CHECK(n > 0 && strstr(buf, "\"catalog\":{\"vcpus\":2,\"price_h\":0.085,\"spot_price_h\":0.035,\"billing_s\":1,"
                              "\"min_s\":60}"), "catalog row written: %s", buf);
  pit_record_release(&q);
  CHECK(pit_record_parse(&q, buf, (size_t)n - 1, &e) == 0 && q.row.have && q.row.vcpus == 2 && q.row.cpus == -1 &&
            q.row.price_h == 0.085 && q.row.spot_price_h == 0.035 && q.row.billing_s == 1 && q.row.min_s == 60 &&
            isnan(q.row.cpu_quota),
        "catalog row read back: %s", e.msg);
  r.row = (struct pit_rec_itype){1, 1, 1, 0.01, NAN, 3600, 0, 0.4};
  n = pit_record_format(&r, &buf, &cap);
  pit_record_release(&q);
  CHECK(n > 0 && pit_record_parse(&q, buf, (size_t)n - 1, &e) == 0 && q.row.cpus == 1 && q.row.cpu_quota == 0.4 &&
            isnan(q.row.spot_price_h) && q.row.billing_s == 3600 && q.row.min_s == 0,
        "a local row (cpus, quota, no spot) read back: %s", buf);
  r.row.have = 0;
  const char *badrow = "{\"type\":\"node\",\"action\":\"start\",\"node\":\"a\",\"itype\":\"x\",\"catalog\":"
                       "{\"vcpus\":2,\"price_h\":0.1,\"min_s\":60}}";
  pit_record_release(&q);
  CHECK(pit_record_parse(&q, badrow, strlen(badrow), &e) == PIT_EFORMAT && strstr(e.msg, "\"catalog\""),
        "a row without billing_s: %s", e.msg);
  pit_record_release(&q);
  const char *bad = "{\"type\":\"node\",\"action\":\"start\",\"node\":\"a\",\"itype\":\"x\",\"market\":\"cheap\"}";
  CHECK(pit_record_parse(&q, bad, strlen(bad), &e) == PIT_EFORMAT && strstr(e.msg, "cheap"), "bad market: %s", e.msg);
  /* "continued": written only when true (a controller that took the run over), read back */
  CHECK(!q.continued && !strstr(buf, "continued"), "not continued: %s", buf);
  r.continued = 1;
  n = pit_record_format(&r, &buf, &cap);
  pit_record_release(&q);
  CHECK(n > 0 && strstr(buf, ",\"continued\":true") && pit_record_parse(&q, buf, (size_t)n - 1, &e) == 0 &&
            q.continued == 1,
        "continued read back: %s", buf);
  pit_record_release(&q);
  const char *badc = "{\"type\":\"node\",\"action\":\"stop\",\"node\":\"a\",\"itype\":\"x\",\"continued\":1}";
  CHECK(pit_record_parse(&q, badc, strlen(badc), &e) == PIT_EFORMAT && strstr(e.msg, "continued"),
        "continued not a boolean: %s", e.msg);

  /* the fold: the record's market and zone; an old file's TYPE@spot; a bare type */
  const char *lines[] = {
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":1,\"action\":\"start\",\"node\":\"a\",\"itype\":\"c5.large\","
      "\"price_h\":0.035,\"market\":\"spot\",\"zone\":\"us-east-1a\"}",
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":1,\"action\":\"start\",\"node\":\"b\",\"itype\":\"c5.large\","
      "\"price_h\":0.085,\"market\":\"on-demand\",\"zone\":\"us-east-1a\"}",
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":1,\"action\":\"start\",\"node\":\"c\",\"itype\":\"c5.large@spot\","
      "\"price_h\":0.035}",
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":1,\"action\":\"start\",\"node\":\"d\",\"itype\":\"c5.large\","
      "\"price_h\":0.085}",
      "{\"type\":\"iter\",\"run\":\"z\",\"gen\":0,\"t\":2,\"step\":0,\"step_s\":0.5}"};
  struct pit_runlog log;
  pit_runlog_init(&log);
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    CHECK(pit_record_parse(&q, lines[i], strlen(lines[i]), &e) == 0, "fold line %zu: %s", i, e.msg);
    CHECK(pit_runlog_add(&log, &q, &e) == 0, "fold: %s", e.msg);
  }
  CHECK(log.nnodes == 4, "nodes %d", log.nnodes);
  CHECK(log.nodes[0].market == PIT_MARKET_SPOT && strcmp(log.nodes[0].zone, "us-east-1a") == 0 &&
            strcmp(log.nodes[0].base, "c5.large") == 0,
        "node a");
  CHECK(log.nodes[1].market == PIT_MARKET_ON_DEMAND && strcmp(log.nodes[1].zone, "us-east-1a") == 0, "node b");
  CHECK(log.nodes[2].market == PIT_MARKET_SPOT && !log.nodes[2].zone[0] && strcmp(log.nodes[2].base, "c5.large") == 0,
        "node c: an old file's TYPE@spot");
  CHECK(log.nodes[3].market == PIT_MARKET_DEFAULT && !log.nodes[3].zone[0], "node d: bare");
  char m[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&log.gens[0].m, m, sizeof m);
  CHECK(strcmp(m, "c5.large:1+c5.large@on-demand:1+c5.large@spot:2") == 0, "the generation's membership: %s", m);
  pit_runlog_release(&log);
  pit_record_release(&r);
  pit_record_release(&q);
  free(buf);
}

static void malformed(void) {
  const char *bad[] = {"{", "[1,2]", "{\"type\":\"nope\"}", "{\"type\":\"iter\",\"step_s\":\"x\"}",
                       "{\"type\":\"iter\",\"compute_s\":[1],\"wait_s\":[1,2]}",
                       "{\"type\":\"iter\",\"step\":-3}", "{\"type\":\"iter\",\"loss\":[1]}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct pit_record r;
    pit_record_init(&r);
    struct pit_err e = {0};
    CHECK(pit_record_parse(&r, bad[i], strlen(bad[i]), &e) == PIT_EFORMAT && e.msg[0], "accepted %s", bad[i]);
    pit_record_release(&r);
  }
}

static void reader_names_line(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/ev.jsonl", check_tmpdir());
  FILE *f = fopen(path, "w");
  fputs("{\"type\":\"init\",\"run\":\"a\",\"gen\":0,\"t\":0,\"init_s\":1.5,\"config\":{\"model\":\"cnn\"}}\n", f);
  fputs("not a record\n\n", f);
  fputs("{\"type\":\"iter\",\"run\":\"a\",\"gen\":0,\"t\":1,\"step_s\":nan}\n", f);
  fclose(f);
  struct pit_record_reader rd;
  struct pit_err e = {0};
  CHECK(pit_record_reader_open(&rd, path, &e) == 0, "open");
  struct pit_record r;
  pit_record_init(&r);
  CHECK(pit_record_reader_next(&rd, &r, &e) == 1 && r.type == PIT_REC_INIT && r.init_s == 1.5, "first");
  CHECK(r.config && strstr(r.config, "cnn"), "config kept as JSON");
  int rc = pit_record_reader_next(&rd, &r, &e);
  CHECK(rc == PIT_EFORMAT && strstr(e.msg, "ev.jsonl:4:"), "error names line 4: %s", e.msg);
  CHECK(rd.skipped == 2, "skipped %ld", rd.skipped);
  pit_record_release(&r);
  pit_record_reader_release(&rd);
}

int main(void) {
  roundtrip_iter();
  roundtrip_node();
  malformed();
  reader_names_line();
  return check_done();
}

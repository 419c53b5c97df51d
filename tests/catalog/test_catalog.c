/* test_catalog.c — the catalog module: columns read by header name (any order,
 * unknown columns ignored, units), the old positional format, SkyPilot's
 * vms.csv with a region filter, bad input naming file:line, the shipped
 * catalogs/aws.tsv and catalogs/local.tsv, and cost = Σ nodes × price ×
 * billed seconds (granularity 3600 s vs 1 s, a 60 s minimum, two types); a run's
 * catalog rebuilt from its node records' rows prices the run as the file does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/catalog.h"

static char path[600];

static void write_file(const char *text) {
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static void by_header(void) {
  struct pit_catalog c;
  struct pit_err e = {0};
  write_file("# a comment\n"
             "price_h\titype\tnew_column\tbilling_s\tmin_s\tvcpus\tspot_price_h\tmemory_gib\tboot_s\tcpus\tcpu_quota\n"
             "0.17\tc5.xlarge\tzzz\t1\t1min\t4\t0.068\t8GiB\t90s\t-\t-\n"
             "0.01 local-0.4 x 1h 0 1 - 512MiB - 1 40%\n");
  CHECK(pit_catalog_load(&c, path, &e) == 0 && c.n == 2, "load: %s", e.msg);
  const struct pit_itype *t = pit_catalog_find(&c, "c5.xlarge");
  CHECK(t && t->price_h == 0.17 && t->vcpus == 4 && t->min_s == 60 && t->billing_s == 1 && t->spot_price_h == 0.068 &&
            t->memory_gib == 8 && t->boot_s == 90 && t->cpus == -1 && isnan(t->cpu_quota) && t->gpus == -1,
        "c5.xlarge by header names, units");
  t = pit_catalog_find(&c, "local-0.4");
  CHECK(t && t->billing_s == 3600 && t->min_s == 0 && isnan(t->spot_price_h) && t->memory_gib == 0.5 && t->cpus == 1 &&
            fabs(t->cpu_quota - 0.4) < 1e-12,
        "local-0.4: 1h, 512MiB, 40%%");
  pit_catalog_release(&c);

  const char *bad[][2] = {
      {"itype vcpus price_h min_s\na 1 0.1 60\n", ":1: no column 'billing_s'"},
      {"itype vcpus price_h billing_s min_s\na 1 -0.1 1 60\n", ":2: price_h '-0.1' is not a positive number"},
      {"itype vcpus price_h billing_s min_s\na 1 cheap 1 60\n", ":2: price_h 'cheap' is not a positive number"},
      {"itype vcpus price_h billing_s min_s spot_price_h\na 1 0.1 1 60 -1\n", ":2: spot_price_h '-1'"},
      {"itype vcpus price_h billing_s min_s\na 1 0.1 1 60\n# x\na 2 0.2 1 60\n", ":4: instance type 'a' listed twice"},
      {"itype vcpus price_h billing_s min_s\na 1 0.1 5d 60\n", ":2: billing_s '5d': unknown unit 'd'"},
      {"itype vcpus price_h billing_s min_s memory_gib\na 1 0.1 1 60 4GB\n", ":2: memory_gib '4GB': unknown unit 'GB'"},
      {"itype vcpus price_h billing_s min_s cpu_quota\na 1 0.1 1 60 140%\n", ":2: cpu_quota '140%'"},
      {"itype vcpus price_h billing_s min_s\na 1 0.1 1\n", ":2: expected 5 fields (as the header on line 1), found 4"},
      {"itype vcpus price_h billing_s min_s region\na 1 0.1 1 60 r1\nb 1 0.1 1 60 r2\n", ":3: region 'r2' after 'r1'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_file(bad[i][0]);
    memset(&e, 0, sizeof e);
    int rc = pit_catalog_load(&c, path, &e);
    CHECK(rc == PIT_EFORMAT && strstr(e.msg, bad[i][1]) && strstr(e.msg, "cat.tsv") && c.n == 0 && !c.types,
          "bad %zu: %d '%s'", i, rc, e.msg);
  }
}

static void skypilot(void) {
  struct pit_catalog c;
  struct pit_err e = {0};
  write_file("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
             "AvailabilityZone\n"
             "p3.2xlarge,V100,1.0,8.0,61.0,\"{'Gpus': [{'Name': 'V100', 'Count': 1}], 'x': 1}\",3.06,0.9,us-east-1,"
             "us-east-1a\n"
             "p3.2xlarge,V100,1.0,8.0,61.0,\"{'Gpus': []}\",3.06,1.1,us-east-1,us-east-1b\n"
             "c5.xlarge,,,4.0,8.0,,0.17,0.07,us-east-1,us-east-1a\n"
             "c5.xlarge,,,4.0,8.0,,0.194,0.08,eu-west-1,eu-west-1a\n"
             "x1.huge,,,64.0,976.0,,,5.0,us-east-1,us-east-1a\n");
  CHECK(pit_catalog_load_region(&c, path, "us-east-1", &e) == 0 && c.n == 2, "us-east-1: %s (n %d)", e.msg, c.n);
  const struct pit_itype *t = pit_catalog_find(&c, "p3.2xlarge");
  CHECK(t && t->price_h == 3.06 && t->spot_price_h == 1.1 && t->gpus == 1 && strcmp(t->accelerator, "V100") == 0 &&
            t->vcpus == 8 && t->memory_gib == 61 && t->billing_s == 1 && t->min_s == 60 &&
            strcmp(t->region, "us-east-1") == 0,
        "p3.2xlarge: zones merged (highest spot), quoted GpuInfo skipped");
  t = pit_catalog_find(&c, "c5.xlarge");
  CHECK(t && t->price_h == 0.17 && t->gpus == 0, "c5.xlarge us-east-1 price");
  CHECK(!pit_catalog_find(&c, "x1.huge"), "a row without on-demand price is skipped");
  pit_catalog_release(&c);
  CHECK(pit_catalog_load_region(&c, path, "eu-west-1", &e) == 0 && c.n == 1 && c.types[0].price_h == 0.194,
        "eu-west-1: %s", e.msg);
  pit_catalog_release(&c);
  memset(&e, 0, sizeof e);
  CHECK(pit_catalog_load(&c, path, &e) == PIT_EFORMAT && strstr(e.msg, ":5: region 'eu-west-1' after 'us-east-1'") &&
            strstr(e.hint, "--region"),
        "several regions without --region: %s", e.msg);
  CHECK(pit_catalog_load_region(&c, path, "mars-1", &e) == PIT_EFORMAT && strstr(e.msg, "in region 'mars-1'"),
        "unknown region: %s", e.msg);
  write_file("InstanceType,vCPUs,MemoryGiB,Region\na,1,2,r\n");
  CHECK(pit_catalog_load(&c, path, &e) == PIT_EFORMAT && strstr(e.msg, "cat.tsv:1: no column 'Price'"),
        "SkyPilot file without Price: %s", e.msg);
  write_file("InstanceType,vCPUs,Price,Region\na,1,free,r\n");
  CHECK(pit_catalog_load(&c, path, &e) == PIT_EFORMAT && strstr(e.msg, "cat.tsv:2: Price 'free' is not a positive number"),
        "non-numeric SkyPilot price: %s", e.msg);
  write_file("itype vcpus price_h billing_s min_s\na 1 0.1 1 60\n");
  CHECK(pit_catalog_load_region(&c, path, "r", &e) == PIT_EARG && strstr(e.msg, "no region column"),
        "--region on a catalog without regions: %s", e.msg);
}

static void shipped(void) {
  const char *src = getenv("PIT_SOURCE_DIR");
  char p[600];
  struct pit_catalog c;
  struct pit_err e = {0};
  snprintf(p, sizeof p, "%s/catalogs/aws.tsv", src ? src : ".");
  CHECK(pit_catalog_load(&c, p, &e) == 0 && c.n >= 10, "aws.tsv: %s", e.msg);
  const struct pit_itype *t = pit_catalog_find(&c, "c5.xlarge");
  CHECK(t && t->price_h == 0.17 && t->spot_price_h > 0 && t->spot_price_h < t->price_h, "aws.tsv c5.xlarge on-demand and spot");
  pit_catalog_release(&c);
  snprintf(p, sizeof p, "%s/catalogs/local.tsv", src ? src : ".");
  CHECK(pit_catalog_load(&c, p, &e) == 0, "local.tsv: %s", e.msg);
  const struct pit_itype *a = pit_catalog_find(&c, "local-1"), *b = pit_catalog_find(&c, "local-0.4");
  CHECK(a && b && a->cpus == 1 && isnan(a->cpu_quota) && b->cpus == 1 && fabs(b->cpu_quota - 0.4) < 1e-12 &&
            a->price_h == b->price_h,
        "local-1 (one CPU) and local-0.4 (one CPU at 40%%), priced alike");
  pit_catalog_release(&c);
}

static void cost(void) {
  struct pit_catalog c;
  struct pit_err e = {0};
  write_file("itype vcpus price_h billing_s min_s spot_price_h\n"
             "hourly 2 0.36 3600 0 -\n"
             "second 4 0.72 1 60 0.36\n");
  CHECK(pit_catalog_load(&c, path, &e) == 0, "load: %s", e.msg);
  struct pit_membership m;
  double usd;
  pit_membership_parse(&m, "hourly:2", &e);
  CHECK(pit_catalog_cost(&c, &m, 1, &usd, &e) == 0 && fabs(usd - 0.72) < 1e-12, "1 s on 2 hourly nodes: 2 full hours, %g", usd);
  CHECK(pit_catalog_cost(&c, &m, 3601, &usd, &e) == 0 && fabs(usd - 2 * 2 * 0.36) < 1e-12, "3601 s: two hours each, %g", usd);
  pit_membership_parse(&m, "second:1", &e);
  CHECK(pit_catalog_cost(&c, &m, 10, &usd, &e) == 0 && fabs(usd - 0.72 * 60 / 3600) < 1e-12, "10 s: the 60 s minimum, %g", usd);
  CHECK(pit_catalog_cost(&c, &m, 100.2, &usd, &e) == 0 && fabs(usd - 0.72 * 101 / 3600) < 1e-12, "100.2 s: 101 s, %g", usd);
  pit_membership_parse(&m, "hourly:2+second:3x4", &e);
  CHECK(pit_catalog_cost(&c, &m, 100.2, &usd, &e) == 0 && fabs(usd - (2 * 0.36 + 3 * 0.72 * 101 / 3600)) < 1e-12,
        "two types: Σ nodes × price × billed seconds, %g", usd);
  CHECK(pit_catalog_cost_priced(&c, &m, 100.2, PIT_SPOT, &usd, &e) == PIT_ENOTFOUND && strstr(e.msg, "'hourly'"),
        "no spot price: %s", e.msg);
  pit_membership_parse(&m, "second:3", &e);
  CHECK(pit_catalog_cost_priced(&c, &m, 7200, PIT_SPOT, &usd, &e) == 0 && fabs(usd - 3 * 0.36 * 2) < 1e-12, "spot %g", usd);
  /* samples per dollar: per-second billing over an hour is DESIGN.md's 3600·batch/(t_p·Σ price) */
  double spd;
  CHECK(pit_catalog_samples_per_dollar(&c, &m, 0.5, 64, 3600, &spd, &e) == 0 &&
            fabs(spd - 3600.0 * 64 / (0.5 * 3 * 0.72)) < 1e-6,
        "samples per dollar %g", spd);
  pit_membership_parse(&m, "hourly:1", &e);
  CHECK(pit_catalog_samples_per_dollar(&c, &m, 0.5, 64, 600, &spd, &e) == 0 && fabs(spd - 600 / 0.5 * 64 / 0.36) < 1e-6,
        "a 10-minute job on hourly billing pays the hour: %g", spd);
  pit_membership_parse(&m, "nosuch:1", &e);
  CHECK(pit_catalog_cost(&c, &m, 10, &usd, &e) == PIT_ENOTFOUND && strstr(e.msg, "'nosuch' is not in the catalog"),
        "unknown type: %s", e.msg);
  pit_membership_clear(&m);
  CHECK(pit_catalog_cost(&c, &m, 10, &usd, &e) == PIT_EARG, "empty membership");
  CHECK(pit_catalog_samples_per_dollar(&c, &m, 0, 64, 10, &spd, &e) == PIT_EARG, "t_p 0");
  pit_catalog_release(&c);
}

/* pit_catalog_from_runlog: the rows a run's node start records carry (one spot node, one hourly
 * on-demand node of another type) give the same pit_runlog_cost as the catalog file; a node
 * without a row (an old file) gives none. */
static void from_runlog(void) {
  struct pit_err e = {0};
  write_file("itype vcpus price_h billing_s min_s spot_price_h\n"
             "hourly 2 0.36 3600 0 -\n"
             "second 4 0.72 1 60 0.36\n");
  struct pit_catalog file, rec;
  CHECK(pit_catalog_load(&file, path, &e) == 0, "load: %s", e.msg);
  const char *lines[] = {
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":1,\"action\":\"start\",\"node\":\"a\",\"itype\":\"second\","
      "\"price_h\":0.36,\"market\":\"spot\",\"catalog\":{\"vcpus\":4,\"price_h\":0.72,\"spot_price_h\":0.36,"
      "\"billing_s\":1,\"min_s\":60}}",
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":1,\"action\":\"start\",\"node\":\"b\",\"itype\":\"hourly\","
      "\"price_h\":0.36,\"market\":\"on-demand\",\"catalog\":{\"vcpus\":2,\"price_h\":0.36,\"billing_s\":3600,"
      "\"min_s\":0}}",
      "{\"type\":\"iter\",\"run\":\"z\",\"gen\":0,\"t\":2,\"step\":0,\"step_s\":0.5}",
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":31,\"action\":\"stop\",\"node\":\"a\"}",
      "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":31,\"action\":\"stop\",\"node\":\"b\"}"};
  struct pit_runlog log;
  pit_runlog_init(&log);
  struct pit_record q;
  pit_record_init(&q);
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    CHECK(pit_record_parse(&q, lines[i], strlen(lines[i]), &e) == 0 && pit_runlog_add(&log, &q, &e) == 0, "line %zu: %s",
          i, e.msg);
    pit_record_release(&q);
  }
  CHECK(pit_catalog_from_runlog(&rec, &log, &e) == 0 && rec.n == 2, "from the records: %s", e.msg);
  const struct pit_itype *s = pit_catalog_find(&rec, "second"), *h = pit_catalog_find(&rec, "hourly");
  CHECK(s && s->vcpus == 4 && s->price_h == 0.72 && s->spot_price_h == 0.36 && s->billing_s == 1 && s->min_s == 60,
        "second's row");
  CHECK(h && h->price_h == 0.36 && isnan(h->spot_price_h) && h->billing_s == 3600 && h->min_s == 0, "hourly's row");
  struct pit_runlog_cost a, b;
  CHECK(pit_runlog_cost(&log, &file, NAN, &a, &e) == 0 && pit_runlog_cost(&log, &rec, NAN, &b, &e) == 0, "cost");
  /* 30 s: spot 0.36 × the 60 s minimum, hourly 0.36 × a whole hour; od_cost at 0.72 */
  CHECK(a.total == b.total && fabs(b.total - (0.36 * 60 / 3600 + 0.36)) < 1e-12 && a.nodes[0].od_cost == b.nodes[0].od_cost &&
            fabs(b.nodes[0].od_cost - 0.72 * 60 / 3600) < 1e-12,
        "the records price as the file: %g vs %g", b.total, a.total);
  pit_runlog_cost_release(&a);
  pit_runlog_cost_release(&b);
  pit_catalog_release(&rec);
  const char *old = "{\"type\":\"node\",\"run\":\"z\",\"gen\":0,\"t\":40,\"action\":\"start\",\"node\":\"c\","
                    "\"itype\":\"second\",\"price_h\":0.72}";
  CHECK(pit_record_parse(&q, old, strlen(old), &e) == 0 && pit_runlog_add(&log, &q, &e) == 0, "old line");
  pit_record_release(&q);
  CHECK(pit_catalog_from_runlog(&rec, &log, &e) == PIT_ENOTFOUND && rec.n == 0 && strstr(e.msg, "node c"),
        "a node without a row: %s", e.msg);
  pit_runlog_release(&log);
  pit_catalog_release(&file);
}

int main(void) {
  snprintf(path, sizeof path, "%s/cat.tsv", check_tmpdir());
  by_header();
  skypilot();
  shipped();
  cost();
  from_runlog();
  return check_done();
}

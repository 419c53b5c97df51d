/* test_parse_fmt.c — the fast output of `pitstop parse` is byte-identical to the
 * reference: pit_parse_g9 == snprintf("%.9g") over millions of doubles (random
 * bits, log-like decimals, ties, powers of ten, edges), and pit_parse_json ==
 * pit_record_format over random records of every type. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/parse.h"
#include "record/parse_impl.h"
#include "record/slim.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double unif(void) { return (double)(next() >> 11) / 9007199254740992.0; }

static int bad_g9 = 0;
static void g9_one(double v) {
  char a[64], b[64];
  int n = pit_parse_g9(v, a);
  snprintf(b, sizeof b, "%.9g", v);
  if ((strcmp(a, b) != 0 || n != (int)strlen(b)) && bad_g9++ < 10)
    CHECK(0, "g9(%.17g) = '%s', printf '%s'", v, a, b);
  check_count++;
}

static void test_g9(void) {
  double edges[] = {0.0, -0.0, 1e-5, 9.99999999e-6, 1e15, 999999999999999.9, 1e-3, 1e-4, 0.1, 1, 10,
                    100000000, 999999999, 999999999.5, 9999999995, 0.5, 1.5, 2.5, 123456789.5, 1e300,
                    -1e-300, 5e-324, INFINITY, -INFINITY, 1068.8312153816223, 2.577510118484497,
                    0.45841264724731445, 4.9937, 1e9, 1e8, 99999999.95, 0.000123456789};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
    g9_one(edges[i]);
    g9_one(-edges[i]);
    g9_one(nextafter(edges[i], 0));
    g9_one(nextafter(edges[i], INFINITY));
  }
  for (int e = -20; e <= 20; e++) /* powers of ten and their neighbours */
    for (int k = -3; k <= 3; k++) {
      double v = pow(10, e);
      for (int j = 0; j < abs(k); j++)
        v = nextafter(v, k < 0 ? 0 : INFINITY);
      g9_one(v);
    }
  for (int i = 0; i < 1000000; i++) { /* random bit patterns in range and out */
    uint64_t bits = next();
    double v;
    memcpy(&v, &bits, sizeof v);
    if (isnan(v))
      continue;
    g9_one(v);
    g9_one(ldexp(unif(), (int)(next() % 110) - 60));
  }
  for (int i = 0; i < 500000; i++) { /* decimals as logs print them, and 9-digit ties */
    double m = (double)(next() % 100000000000ULL);
    int sc = (int)(next() % 16);
    g9_one(m / pow(10, sc));
    double t = ((double)(next() % 1000000000ULL) + 0.5) * pow(10, (int)(next() % 12) - 8);
    g9_one(t);
  }
}

static double rnd_time(void) {
  switch (next() % 5) {
  case 0:
    return NAN;
  case 1:
    return unif() * 10;
  case 2:
    return floor(unif() * 1e6) / 1e4;
  case 3:
    return unif() * 1e-7;
  default:
    return ldexp(unif(), (int)(next() % 80) - 40);
  }
}
static int64_t rnd_int(void) { return next() % 3 == 0 ? -1 : (int64_t)(next() % 100000); }

static void rnd_str(char *s, size_t cap) {
  static const char alpha[] = "abcXYZ09_-. \"\\\t\n\x01\xc3\xa9/";
  size_t n = next() % (cap < 12 ? cap : 12);
  for (size_t i = 0; i < n; i++)
    s[i] = alpha[next() % (sizeof alpha - 1)];
  s[n] = 0;
}

/* The fields every record kind may have, random (absent now and then). */
static void rnd_head(struct pit_record *r) {
  r->type = (enum pit_rec_type)(1 + next() % (PIT_REC_NTYPES - 1));
  rnd_str(r->run, sizeof r->run);
  r->gen = (int)(next() % 5);
  r->t = rnd_time();
  r->rank = (int)rnd_int();
  r->epoch = rnd_int();
  r->iter = rnd_int();
  r->step = rnd_int();
  r->batch = rnd_int();
  r->step_s = rnd_time();
  r->data_s = rnd_time();
}

static void test_json(void) {
  char *ref = NULL;
  size_t cap = 0;
  int bad = 0;
  for (int i = 0; i < 20000; i++) {
    struct pit_record r;
    pit_record_init(&r);
    rnd_head(&r);
    if (next() % 3 == 0) {
      int n = 1 + (int)(next() % 4);
      pit_record_set_ranks(&r, n);
      for (int k = 0; k < n; k++) {
        r.compute_s[k] = rnd_time();
        r.wait_s[k] = rnd_time();
      }
    }
    if (next() % 2) {
      r.nlosses = (int)(next() % 3);
      for (int k = 0; k < r.nlosses; k++) {
        rnd_str(r.loss_name[k], sizeof r.loss_name[0]);
        r.loss_val[k] = rnd_time();
      }
    } else {
      r.loss = rnd_time();
    }
    r.init_s = rnd_time();
    r.rdzv_s = rnd_time();
    r.ranks = (int)rnd_int();
    r.nodes = (int)rnd_int();
    if (next() % 4 == 0)
      r.config = strdup("{\"model\":\"cnn\",\"batch\":64}");
    r.val_s = rnd_time();
    r.ckpt_s = rnd_time();
    r.epoch_s = rnd_time();
    r.total_s = rnd_time();
    r.accuracy = rnd_time();
    if (next() % 4 == 0) {
      char p[32];
      rnd_str(p, sizeof p);
      r.path = strdup(p);
    }
    r.bytes = rnd_int();
    rnd_str(r.action, sizeof r.action);
    rnd_str(r.node, sizeof r.node);
    rnd_str(r.itype, sizeof r.itype);
    r.price_h = rnd_time();
    if (next() % 8 == 0)
      r.detail = strdup("{\"why\":\"cheaper\"}");
    int n = pit_record_format(&r, &ref, &cap);
    size_t bound = pit_parse_json_bound(&r);
    char *fast = malloc(bound);
    size_t m = pit_parse_json(&r, fast);
    CHECK(m <= bound, "bound %zu < %zu", bound, m);
    if ((n < 0 || (size_t)n != m || memcmp(ref, fast, m) != 0) && bad++ < 5)
      CHECK(0, "record %d differs:\n ref  %.*s fast %.*s", i, n, ref, (int)m, fast);
    check_count++;
    free(fast);
    pit_record_release(&r);
  }
  free(ref);
}

/* The log-number reader gives strtod's double for every decimal (1-20 digits, as
 * Python's repr and %f print them, exponents, leading zeros). */
static void test_f64(void) {
  int bad = 0;
  char buf[128];
  for (int i = 0; i < 2000000; i++) {
    int nd = 1 + (int)(next() % 20), point = (int)(next() % (nd + 1)), n = 0;
    if (next() % 4 == 0)
      buf[n++] = '-';
    if (next() % 8 == 0)
      buf[n++] = '0';
    for (int k = 0; k < nd; k++) {
      if (k == point && k > 0)
        buf[n++] = '.';
      buf[n++] = (char)('0' + next() % 10);
    }
    if (next() % 5 == 0)
      n += snprintf(buf + n, sizeof buf - (size_t)n, "e%d", (int)(next() % 50) - 25);
    if (i % 3 == 0) /* the shortest repr of a random double */
      n = snprintf(buf, sizeof buf, "%.17g", ldexp(unif(), (int)(next() % 40) - 20));
    buf[n] = 0;
    double v = 0, ref = strtod(buf, NULL);
    int sig = 0, seen = 0; /* significant digits: the mantissa's digits after its leading zeros */
    for (const char *q = buf; *q && *q != 'e'; q++)
      if (*q >= '0' && *q <= '9' && (seen |= *q != '0'))
        sig++;
    /* at the end of the line (read from a padded copy) and followed by more text (read in place) */
    static const char *const tails[] = {"", "s, Loss_G: 0.1234, D(x): 0.5879", ",Elapsed time,12.5"};
    const char *tail = tails[i % 3];
    size_t tl = strlen(tail);
    memcpy(buf + n, tail, tl + 1);
    const char *s = buf;
    int dig = 0;
    int ok = pit_pl_f64(&s, buf + n + tl, &v, &dig);
    if ((!ok || s != buf + n || memcmp(&v, &ref, sizeof v) != 0 || dig != (sig ? sig : 1)) && bad++ < 10)
      CHECK(0, "pit_pl_f64('%.*s') = %.17g (ok %d, %d digits), strtod %.17g (%d digits)", n, buf, v, ok, dig,
            ref, sig);
    check_count++;
  }
}

/* The fast JSON reader and cJSON's agree on strings that hold a byte the fast
 * reader must stop at, at every offset of the 8-byte words it scans and in the
 * byte loop for the last few bytes of a line (the string last, before '"}'),
 * for every length near the word size. What can differ is '"' (ends the
 * string) and '\\' (an escape cJSON decodes: the fast reader must hand the
 * line over); control bytes, 0x7f and bytes >= 0x80 are refused by the fast
 * reader and accepted by cJSON unchanged, so for them this checks only that
 * the verdict and the text stay cJSON's. */
static void test_json_strings(void) {
  static const unsigned char special[] = {'\\', 0x01, 0x1f, 0x7f, 0x80, 0xc3, 0xff, ' ', '~', '"'};
  for (int last = 0; last < 2; last++) { /* the string mid-line or last */
    for (int len = 0; len <= 20; len++)
      for (int at = -1; at < len; at++)
        for (size_t k = 0; k < sizeof special; k++) {
          if (at < 0 && k > 0)
            break;
          char name[32], line[160];
          for (int i = 0; i < len; i++)
            name[i] = (char)('a' + i % 26);
          if (at >= 0)
            name[at] = (char)special[k];
          if (at >= 0 && special[k] == '\\' && at + 1 < len)
            name[at + 1] = 'n'; /* a valid escape: cJSON reads it */
          int n = last ? snprintf(line, sizeof line, "{\"type\":\"iter\",\"step\":3,\"run\":\"%.*s\"}", len, name)
                       : snprintf(line, sizeof line, "{\"type\":\"iter\",\"run\":\"%.*s\",\"step\":3}", len, name);
          struct pit_record a, b;
          pit_record_init(&a);
          pit_record_init(&b);
          struct pit_err ea = {0}, eb = {0};
          int ra = pit_parse_json_record(&a, line, (size_t)n, &ea);
          int rb = pit_record_parse(&b, line, (size_t)n, &eb);
          CHECK(ra == rb && (ra != 0 || (strcmp(a.run, b.run) == 0 && a.step == b.step)),
                "len %d, byte 0x%02x at %d: fast %d '%s', cJSON %d '%s'", len, special[k], at, ra, a.run, rb, b.run);
          pit_record_release(&a);
          pit_record_release(&b);
        }
  }
}

/* A record that fits the slim form comes back from it formatting to the same
 * bytes (pit_parse_json and pit_record_format); one with any other field set
 * does not fit. Random records, each field outside the slim form rarely set. */
static void test_slim(void) {
  int fits = 0, bad = 0;
  char *a = NULL, *b = NULL;
  size_t ca = 0, cb = 0;
  for (int i = 0; i < 200000; i++) {
    struct pit_record r, back;
    pit_record_init(&r);
    rnd_head(&r);
    r.init_s = rnd_time();
    r.epoch_s = rnd_time();
    r.val_s = rnd_time();
    r.ranks = (int)rnd_int();
    if (next() % 2) {
      r.nlosses = (int)(next() % 4);
      for (int k = 0; k < r.nlosses; k++) {
        size_t len = next() % 7; /* 0..6 bytes: some too long for the slim form */
        for (size_t j = 0; j < len; j++)
          r.loss_name[k][j] = "dgxyZ_"[next() % 6];
        r.loss_val[k] = rnd_time();
      }
    } else {
      r.loss = rnd_time();
    }
    int other = 0; /* one field the slim form does not carry, now and then */
    switch (next() % 24) {
    case 0: r.rdzv_s = 0.5, other = 1; break;
    case 1: r.nodes = 2, other = 1; break;
    case 2: r.ckpt_s = 1.5, other = 1; break;
    case 3: r.total_s = 9, other = 1; break;
    case 4: r.accuracy = 0.9, other = 1; break;
    case 5: r.bytes = 100, other = 1; break;
    case 6: memcpy(r.action, "start", 6), other = 1; break;
    case 7: memcpy(r.node, "h1", 3), other = 1; break;
    case 8: memcpy(r.itype, "c5", 3), other = 1; break;
    case 9: r.price_h = 0.1, other = 1; break;
    case 10: r.config = strdup("{\"model\":\"cnn\"}"), other = 1; break;
    case 11: r.path = strdup("ckpt/x"), other = 1; break;
    case 12: r.detail = strdup("{\"why\":\"x\"}"), other = 1; break;
    case 13: pit_record_set_ranks(&r, 2), other = 1; break;
    default: break;
    }
    int f = pit_slim_fits(&r);
    int short_names = r.nlosses <= 2;
    for (int k = 0; k < r.nlosses && k < 2; k++)
      short_names &= strlen(r.loss_name[k]) < PIT_SLIM_NAME;
    if (f != (!other && short_names) && bad++ < 5)
      CHECK(0, "record %d: fits %d, expected %d", i, f, !other && short_names);
    if (f) {
      fits++;
      struct pit_slim o;
      memset(&o, 0xa5, sizeof o); /* stale bytes must not leak out */
      pit_slim_put(&o, &r);
      pit_record_init(&back);
      pit_slim_get(&back, &o, r.run);
      char fa[4096], fb[4096];
      size_t na = pit_parse_json(&r, fa), nb = pit_parse_json(&back, fb);
      int ra = pit_record_format(&r, &a, &ca), rb = pit_record_format(&back, &b, &cb);
      if ((na != nb || memcmp(fa, fb, na) != 0 || ra != rb || ra < 0 || memcmp(a, b, (size_t)ra) != 0) && bad++ < 5)
        CHECK(0, "record %d differs after the slim form:\n was %.*s now %.*s", i, (int)na, fa, (int)nb, fb);
    }
    check_count++;
    pit_record_release(&r);
  }
  CHECK(fits > 50000, "only %d of 200000 records fit the slim form", fits);
  free(a);
  free(b);
}

int main(void) {
  test_slim();
  test_json_strings();
  test_f64();
  test_g9();
  test_json();
  return check_done();
}

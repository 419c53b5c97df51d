/* parse_fmt.c — fast JSON Lines output for `pitstop parse`: the same bytes as
 * pit_record_format (record.c), written with memcpy and a printf-free "%.9g".
 *
 * Invariant: pit_parse_g9(v) == snprintf("%.9g", v) for every double. The fast
 * path scales |v| in [1e-5, 1e15) by an exact power of ten (<= 1e13) with one
 * rounded double operation (error < 2.3e-7 on a 9-digit integer) and rounds; a
 * value whose rounding is within 1e-6 of a tie, or outside that range, goes to
 * snprintf (a product rounded across 1e8 or 1e9 is within 1e-7 of it, where
 * both exponents give the same 9 digits). Tested
 * against snprintf in tests/record/test_parse_fmt.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/parse.h"

static const double P10D[21] = {1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0,  1e1,
                                 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                 1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
static const double P10[14] = {1e0, 1e1, 1e2, 1e3,  1e4,  1e5,  1e6,
                               1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13};

static const char PAIRS[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";

static int slow_g9(double v, char *out) { return snprintf(out, 32, "%.9g", v); }

int pit_parse_g9(double v, char *out) {
  double a = fabs(v);
  if (!(a >= 1e-5 && a < 1e15)) {
    if (v == 0) { /* "0" or "-0" */
      int n = 0;
      if (signbit(v))
        out[n++] = '-';
      out[n++] = '0';
      out[n] = 0;
      return n;
    }
    return slow_g9(v, out);
  }
  /* largest k with a >= P10D[k] (decimal exponent e = k - 5), from the binary exponent */
  uint64_t bits;
  memcpy(&bits, &a, sizeof bits);
  int e2 = (int)(bits >> 52) - 1023; /* a in [2^e2, 2^(e2+1)), e2 in [-17, 49] */
  int k = ((e2 * 1233) >> 12) + 5;   /* floor(e2 * log10(2)) + 5: k or k - 1, at most 19 */
  if (k < 0)
    k = 0;                           /* k is 0 then (a >= 1e-5) */
  k += a >= P10D[k + 1];             /* no loop: a branch here is mispredicted half the time */
  int e = k - 5, sh = 8 - e; /* sh in [-6, 13] */
  double sc = sh >= 0 ? a * P10[sh] : a / P10[-sh];
  if (sc < 1e8 || sc >= 1e9)
    return slow_g9(v, out);
  double fl = floor(sc), fr = sc - fl;
  if (fabs(fr - 0.5) < 1e-6)
    return slow_g9(v, out);
  uint64_t m = (uint64_t)fl + (fr > 0.5);
  if (m == 1000000000u) {
    m = 100000000u;
    e++;
  }
  char d[24] = {0}; /* the 9 digits: one, then four pairs from a table; padding for fixed-size copies */
  uint32_t hi = (uint32_t)(m / 10000), lo = (uint32_t)(m % 10000);
  d[0] = (char)('0' + hi / 10000);
  memcpy(d + 1, PAIRS + 2 * (hi / 100 % 100), 2);
  memcpy(d + 3, PAIRS + 2 * (hi % 100), 2);
  memcpy(d + 5, PAIRS + 2 * (lo / 100), 2);
  memcpy(d + 7, PAIRS + 2 * (lo % 100), 2);
  uint64_t z; /* d[1..8] with '0' bytes zeroed: its top zero bytes are the trailing zeros */
  memcpy(&z, d + 1, 8);
  z ^= 0x3030303030303030ULL;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  int nd = z ? 9 - (__builtin_clzll(z) >> 3) : 1;
#else
  int nd = z ? 9 - (__builtin_ctzll(z) >> 3) : 1;
#endif
  char *o = out;
  if (v < 0)
    *o++ = '-';
  if (e < -4 || e >= 9) {
    *o++ = d[0];
    if (nd > 1) {
      *o++ = '.';
      memcpy(o, d + 1, (size_t)nd - 1);
      o += nd - 1;
    }
    int x = e < 0 ? -e : e;
    *o++ = 'e';
    *o++ = e < 0 ? '-' : '+';
    *o++ = (char)('0' + x / 10);
    *o++ = (char)('0' + x % 10);
  } else if (e >= 0) { /* fixed-size copies (out has 32 bytes), the length chosen after */
    memcpy(o, d, 16);
    o[e + 1] = '.';
    memcpy(o + e + 2, d + e + 1, 8);
    o += nd > e + 1 ? nd + 1 : e + 1;
  } else {
    memcpy(o, "0.000000", 8);
    o += 1 - e;
    memcpy(o, d, 16);
    o += nd;
  }
  *o = 0;
  return (int)(o - out);
}

/* ---- writer ---- */

static char *put_i64(char *o, long long v) {
  char t[24];
  int n = 24;
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  while (u >= 100) { /* two digits at a time, from the right */
    n -= 2;
    memcpy(t + n, PAIRS + 2 * (u % 100), 2);
    u /= 100;
  }
  if (u >= 10) {
    n -= 2;
    memcpy(t + n, PAIRS + 2 * u, 2);
  } else {
    t[--n] = (char)('0' + u);
  }
  if (v < 0)
    *o++ = '-';
  memcpy(o, t + n, (size_t)(24 - n));
  return o + (24 - n);
}

static char *put_str(char *o, const char *s) {
  static const char hex[] = "0123456789abcdef";
  *o++ = '"';
  for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
    if (*q == '"' || *q == '\\') {
      *o++ = '\\';
      *o++ = (char)*q;
    } else if (*q < 0x20) {
      memcpy(o, "\\u00", 4);
      o[4] = hex[*q >> 4];
      o[5] = hex[*q & 15];
      o += 6;
    } else {
      *o++ = (char)*q;
    }
  }
  *o++ = '"';
  return o;
}

/* ,"key": */
static char *put_key(char *o, const char *key, size_t n) {
  *o++ = ',';
  *o++ = '"';
  memcpy(o, key, n);
  o += n;
  *o++ = '"';
  *o++ = ':';
  return o;
}
#define KEY(o, k) put_key(o, k, sizeof(k) - 1)

static char *put_num(char *o, const char *key, size_t n, double v) {
  if (isnan(v))
    return o;
  o = put_key(o, key, n);
  return o + pit_parse_g9(v, o);
}
#define NUM(o, k, v) put_num(o, k, sizeof(k) - 1, v)

static char *put_int(char *o, const char *key, size_t n, int64_t v) {
  if (v < 0)
    return o;
  o = put_key(o, key, n);
  return put_i64(o, (long long)v);
}
#define INT(o, k, v) put_int(o, k, sizeof(k) - 1, v)

static char *put_sfield(char *o, const char *key, size_t n, const char *v) {
  if (!v || !*v)
    return o;
  return put_str(put_key(o, key, n), v);
}
#define STR(o, k, v) put_sfield(o, k, sizeof(k) - 1, v)

static char *put_raw(char *o, const char *key, size_t n, const char *json) {
  if (!json || !*json)
    return o;
  o = put_key(o, key, n);
  size_t l = strlen(json);
  memcpy(o, json, l);
  return o + l;
}
#define RAW(o, k, v) put_raw(o, k, sizeof(k) - 1, v)

static char *put_val(char *o, double v) {
  if (isnan(v)) {
    memcpy(o, "null", 4);
    return o + 4;
  }
  return o + pit_parse_g9(v, o);
}

static char *put_arr(char *o, const char *key, size_t n, const double *v, int len) {
  if (len <= 0)
    return o;
  o = put_key(o, key, n);
  *o++ = '[';
  for (int i = 0; i < len; i++) {
    if (i)
      *o++ = ',';
    o = put_val(o, v[i]);
  }
  *o++ = ']';
  return o;
}
#define ARR(o, k, v, n) put_arr(o, k, sizeof(k) - 1, v, n)

static size_t slen(const char *s) { return s ? strlen(s) : 0; }

size_t pit_parse_json_bound(const struct pit_record *r) {
  return 4096 + (size_t)(r->nranks > 0 ? r->nranks : 0) * 2 * 34 + slen(r->config) +
         slen(r->detail) + 6 * slen(r->path);
}

size_t pit_parse_json(const struct pit_record *r, char *out) {
  char *o = out;
  const char *tn = pit_rec_type_name(r->type);
  memcpy(o, "{\"type\":\"", 9);
  o += 9;
  size_t tl = strlen(tn);
  memcpy(o, tn, tl);
  o += tl;
  memcpy(o, "\",\"run\":", 8);
  o = put_str(o + 8, r->run);
  o = put_i64(KEY(o, "gen"), r->gen);
  o = NUM(o, "t", r->t);
  o = INT(o, "rank", r->rank);
  o = INT(o, "epoch", r->epoch);
  o = INT(o, "iter", r->iter);
  o = INT(o, "step", r->step);
  o = INT(o, "batch", r->batch);
  o = NUM(o, "step_s", r->step_s);
  o = NUM(o, "data_s", r->data_s);
  o = ARR(o, "compute_s", r->compute_s, r->nranks);
  o = ARR(o, "wait_s", r->wait_s, r->nranks);
  if (r->nlosses > 0) {
    o = KEY(o, "loss");
    *o++ = '{';
    for (int i = 0; i < r->nlosses && i < PIT_MAX_LOSSES; i++) {
      if (i)
        *o++ = ',';
      char name[sizeof r->loss_name[0] + 1];
      memcpy(name, r->loss_name[i], sizeof r->loss_name[0]);
      name[sizeof r->loss_name[0]] = 0;
      o = put_str(o, name);
      *o++ = ':';
      o = put_val(o, r->loss_val[i]);
    }
    *o++ = '}';
  } else {
    o = NUM(o, "loss", r->loss);
  }
  o = NUM(o, "init_s", r->init_s);
  o = NUM(o, "rdzv_s", r->rdzv_s);
  o = INT(o, "ranks", r->ranks);
  o = INT(o, "nodes", r->nodes);
  o = RAW(o, "config", r->config);
  o = NUM(o, "val_s", r->val_s);
  o = NUM(o, "ckpt_s", r->ckpt_s);
  o = NUM(o, "epoch_s", r->epoch_s);
  o = NUM(o, "total_s", r->total_s);
  o = NUM(o, "accuracy", r->accuracy);
  o = STR(o, "path", r->path);
  o = INT(o, "bytes", r->bytes);
  o = STR(o, "action", r->action);
  o = STR(o, "node", r->node);
  o = STR(o, "itype", r->itype);
  o = NUM(o, "price_h", r->price_h);
  o = RAW(o, "detail", r->detail);
  *o++ = '}';
  *o++ = '\n';
  return (size_t)(o - out);
}

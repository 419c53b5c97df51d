/* parse_num.c — the log parser's numbers: pit_pl_f64 reads a decimal number
 * ([+-]d[.d][e[+-]d], finite) straight from the line, eight digits at a time
 * where it can, and pit_pl_bad sets the reason a value is malformed.
 * Invariants: never reads past end; the value is the correctly rounded double
 * (exact powers of ten, a 64-bit long double with a check of its rounding, else
 * strtod on a bounded copy); an infinite or out-of-range value is not a number. */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/parse_impl.h"

static const double exact_p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#if LDBL_MANT_DIG == 64
static const long double exact_p10l[28] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
    1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
static const long double inv_p10l[28] = {
    1e-0L,  1e-1L,  1e-2L,  1e-3L,  1e-4L,  1e-5L,  1e-6L,  1e-7L,  1e-8L,  1e-9L,
    1e-10L, 1e-11L, 1e-12L, 1e-13L, 1e-14L, 1e-15L, 1e-16L, 1e-17L, 1e-18L, 1e-19L,
    1e-20L, 1e-21L, 1e-22L, 1e-23L, 1e-24L, 1e-25L, 1e-26L, 1e-27L};
#endif

/* SWAR: 8 ASCII digits (first digit in the lowest byte; 0 bytes count as leading
 * zeros) → their value. */
static inline uint64_t value8(uint64_t v) {
  v = ((v & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;
  v = ((v & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
  return ((v & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
}
static const uint64_t u_p10[20] = {1ULL,
                                   10ULL,
                                   100ULL,
                                   1000ULL,
                                   10000ULL,
                                   100000ULL,
                                   1000000ULL,
                                   10000000ULL,
                                   100000000ULL,
                                   1000000000ULL,
                                   10000000000ULL,
                                   100000000000ULL,
                                   1000000000000ULL,
                                   10000000000000ULL,
                                   100000000000000ULL,
                                   1000000000000000ULL,
                                   10000000000000000ULL,
                                   100000000000000000ULL,
                                   1000000000000000000ULL,
                                   10000000000000000000ULL};
/* Decimal digits of m > 0: from its bit length (log10(2) ~ 1233/4096), then one compare. */
static inline int dec_len(uint64_t m) {
  int t = ((64 - __builtin_clzll(m)) * 1233) >> 12; /* digits - 1 or digits */
  return t + (t < 20 && m >= u_p10[t]);
}
/* How many of the 8 bytes in v (first byte lowest) lead as ASCII digits: 0..8.
 * A carry out of a byte >= 0xFA only reaches later bytes, after a non-digit. */
static inline int lead_digits8(uint64_t v) {
  uint64_t t = (v & 0xF0F0F0F0F0F0F0F0ULL) | (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4);
  uint64_t non = t ^ 0x3333333333333333ULL;
  return non ? __builtin_ctzll(non) >> 3 : 8;
}
/* Digits from s on, accumulated into *m (wrapping past 19 digits: the caller
 * counts them and then ignores m); returns the end of the digits. Where 8 bytes
 * are left before end, a run of up to 8 digits is found and valued without a
 * branch per digit (the byte loop's exit was mispredicted on every number). */
static inline const char *scan_digits(const char *s, const char *end, uint64_t *m) {
  uint64_t v, acc = *m;
  while (end - s >= 8) {
    memcpy(&v, s, 8);
    int n = lead_digits8(v);
    if (n == 8) {
      acc = acc * 100000000u + value8(v);
      s += 8;
      continue;
    }
    if (n)
      acc = acc * u_p10[n] + value8(v << (64 - 8 * n));
    *m = acc;
    return s + n;
  }
  while (s < end && pl_isdigit(*s))
    acc = acc * 10 + (uint64_t)(*s++ - '0');
  *m = acc;
  return s;
}

int pit_pl_f64(const char **pp, const char *end, double *out, int *ndig) {
  const char *s = *pp, *start = s;
  int neg = 0;
  if (s < end && (*s == '-' || *s == '+'))
    neg = *s++ == '-';
  /* one pass: the digits are scanned and accumulated together; the integer and
   * fraction parts in two independent chains, joined once (shorter latency) */
  uint64_t m = 0, mf = 0;
  const char *ip = s, *ie = scan_digits(s, end, &m), *fp = ie, *fe = ie;
  s = ie;
  if (s < end && *s == '.') {
    fp = s + 1;
    fe = scan_digits(fp, end, &mf);
    s = fe;
  }
  int digits = (int)((ie - ip) + (fe - fp));
  if (digits == 0)
    return 0;
  if (digits <= 19)
    m = m * u_p10[fe - fp] + mf;
  int exp10 = -(int)(fe - fp);
  if (s < end && (*s == 'e' || *s == 'E')) {
    const char *q = s + 1;
    int eneg = 0;
    if (q < end && (*q == '-' || *q == '+'))
      eneg = *q++ == '-';
    int ev = 0, en = 0;
    while (q < end && pl_isdigit(*q)) {
      if (ev < 100000)
        ev = ev * 10 + (*q - '0');
      q++;
      en++;
    }
    if (en == 0)
      return 0;
    exp10 += eneg ? -ev : ev;
    s = q;
  }
  /* significant digits: those after the leading zeros, i.e. m's when m is exact */
  int sig, exact = digits <= 19;
  if (exact) {
    sig = m ? dec_len(m) : 0;
  } else {
    int lead = 0;
    for (const char *q = ip; q < fe && (*q == '0' || *q == '.'); q++)
      lead += *q == '0';
    sig = digits - lead;
    m = 0;
    exact = sig == 0; /* many zeros: the value is 0 */
  }
  double v;
  if (!exact) {
    goto slow;
  } else if (m == 0) {
    v = 0;
  } else if (m < (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
    /* exact operands, one rounding (Clinger's fast path) */
    v = exp10 < 0 ? (double)m / exact_p10[-exp10] : (double)m * exact_p10[exp10];
  }
#if LDBL_MANT_DIG == 64
  else if (exp10 >= -27 && exp10 <= 27) {
    /* In 64-bit long double: m exactly times 10^exp10 (exact) or 10^-k (rounded),
     * so x is within 2 units of its last place of the true value; rounded to
     * double it is correct unless a halfway point between doubles lies within
     * 3 units of x (its 11 extra bits near 0x400): then strtod. A multiply, not
     * a divide: the path of 17-19 digit numbers (Python reprs like 0.45841264724731445). */
    long double x = exp10 < 0 ? (long double)m * inv_p10l[-exp10] : (long double)m * exact_p10l[exp10];
    uint64_t mant;
    memcpy(&mant, &x, sizeof mant);
    unsigned low = (unsigned)(mant & 0x7ff);
    if (low >= 0x400 - 3 && low <= 0x400 + 3)
      goto slow;
    v = (double)x;
  }
#endif
  else {
  slow:; /* rare: hand it to strtod */
    char buf[512];
    size_t n = (size_t)(s - start);
    if (n >= sizeof buf)
      return 0;
    memcpy(buf, start, n);
    buf[n] = 0;
    char *ep;
    errno = 0;
    v = strtod(buf, &ep);
    if (*ep || errno == ERANGE || !isfinite(v))
      return 0;
    neg = 0;
  }
  *out = neg ? -v : v;
  *ndig = sig ? sig : 1;
  *pp = s;
  return 1;
}

int pit_pl_bad(struct pit_parser *p, const char *what, const char *at, const char *end) {
  if (!at || at >= end) {
    snprintf(p->reason, sizeof p->reason, "missing %s", what);
    return PL_BAD;
  }
  char text[32];
  size_t n = 0;
  for (const char *q = at; q < end && n < 24; q++)
    text[n++] = (*q >= 0x20 && *q < 0x7f) ? *q : '?';
  text[n] = 0;
  snprintf(p->reason, sizeof p->reason, "bad %s: '%s%s'", what, text, (end - at) > 24 ? "..." : "");
  return PL_BAD;
}

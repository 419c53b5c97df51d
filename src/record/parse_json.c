/* parse_json.c — the JSON family of `pitstop parse`: pitstop's own JSON Lines
 * ({...} at the line start) and `PITSTOP {json}` lines inside any program's
 * output (docs/records.md).
 *
 * A record is read by a hand-written fast path for the common shape (flat
 * object, known keys once each, plain ASCII strings without escapes, short
 * numbers, compute_s/wait_s arrays, loss as number or object); anything else
 * (config/detail/path objects, escapes, unknown or repeated keys, a value the
 * checks would reject) is handed whole to pit_record_parse (cJSON), so the
 * result — record or error message — is always pit_record_parse's.
 *
 * Invariant: a marked line or a bare object naming a "type" that fails to parse
 * is malformed; a bare {...} line without "type" is someone else's JSON (unknown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/parse_impl.h"

enum { FAST_OK = 0, FAST_NO = 1 };

static void ws(const char **s, const char *end) {
  while (*s < end && (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r'))
    (*s)++;
}

/* A number as cJSON reads it (starting with '-' or a digit, strtod's syntax;
 * at most 25 characters), or null (NaN). Whatever cJSON would read differently
 * fails here and goes to pit_record_parse. */
static int jnum(const char **sp, const char *end, double *out) {
  const char *s = *sp;
  if (s < end && *s == 'n') {
    if (end - s >= 4 && memcmp(s, "null", 4) == 0) {
      *out = NAN;
      *sp = s + 4;
      return 1;
    }
    return 0;
  }
  if (s >= end || (*s != '-' && !pl_isdigit(*s)))
    return 0;
  int dig;
  if (!pit_pl_f64(&s, end, out, &dig) || s - *sp > 25)
    return 0;
  *sp = s;
  return 1;
}

/* The bytes of v (first byte lowest) that end a plain string — '"', '\\', a
 * control byte, 0x7f or above — as their high bits; the lowest one set is
 * exact (a borrow or carry can only mark bytes above a byte that matched). */
static inline uint64_t str_stops8(uint64_t v) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
  uint64_t quote = (q - ones) & ~q, bslash = (b - ones) & ~b;
  uint64_t ctl = (v - ones * 0x20) & ~v;            /* < 0x20 */
  uint64_t top = ((v & ~high) + ones) | v;          /* 0x7f or >= 0x80 */
  return (quote | bslash | ctl | top) & high;
}

/* A string of printable ASCII without escapes; p, n point into the line. */
static int jstr(const char **sp, const char *end, const char **p, size_t *n) {
  const char *s = *sp;
  if (s >= end || *s != '"')
    return 0;
  const char *q = ++s;
  while (end - q >= 8) { /* 8 bytes at a time: one branch per 8, not three per byte */
    uint64_t v;
    memcpy(&v, q, 8);
    uint64_t stop = str_stops8(v);
    if (stop) {
      q += __builtin_ctzll(stop) >> 3;
      goto found;
    }
    q += 8;
  }
  while (q < end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f)
    q++;
found:
  if (q >= end || *q != '"')
    return 0;
  *p = s;
  *n = (size_t)(q - s);
  *sp = q + 1;
  return 1;
}

static void copy_str(char *dst, size_t cap, const char *p, size_t n) {
  if (n >= cap)
    n = cap - 1;
  memcpy(dst, p, n);
  dst[n] = 0;
}

/* get_int's checks: absent (null), or a non-negative integer below 2^53 (and max). */
static int jint(const char **s, const char *end, int64_t *out, double max) {
  /* the usual case, plain digits ("step": 12), read directly; the same value
   * and verdict as below (at most 15 digits: below 2^53) */
  const char *q = *s;
  int64_t iv;
  if (pl_i64(&q, end, &iv) && (q >= end || (*q != '.' && *q != 'e' && *q != 'E'))) {
    if ((double)iv > max)
      return 0;
    *out = iv;
    *s = q;
    return 1;
  }
  double v;
  if (!jnum(s, end, &v))
    return 0;
  if (isnan(v))
    return 1;
  if (v < 0 || v > 9.007199254740992e15 || v != floor(v) || v > max)
    return 0;
  *out = (int64_t)v;
  return 1;
}

/* After a value: 1 at a ',' (skipped, more follow), 2 at the closer (skipped), 0 otherwise. */
static int next_item(const char **sp, const char *end, char closer) {
  const char *s = *sp;
  ws(&s, end);
  if (s < end && (*s == ',' || *s == closer)) {
    int more = *s == ',';
    s++;
    if (more)
      ws(&s, end);
    *sp = s;
    return more ? 1 : 2;
  }
  return 0;
}

/* A list at *sp: opener, items separated by ',', closer, white space between.
 * Each item is read by item(ctx, &s, end), 1 when it was one (0: not for the
 * fast path). 1 with *sp past the closer; 0 otherwise. */
static inline int each_item(const char **sp, const char *end, char opener, char closer,
                            int (*item)(void *ctx, const char **sp, const char *end), void *ctx) {
  const char *s = *sp;
  if (s >= end || *s != opener)
    return 0;
  s++;
  ws(&s, end);
  if (s < end && *s == closer) {
    *sp = s + 1;
    return 1;
  }
  for (;;) {
    if (!item(ctx, &s, end))
      return 0;
    int k = next_item(&s, end, closer);
    if (k != 1) {
      *sp = s;
      return k == 2;
    }
  }
}

struct nums {
  double *v;
  int cap, n;
};

static int num_item(void *ctx, const char **sp, const char *end) {
  struct nums *a = ctx;
  if (a->n >= a->cap || !jnum(sp, end, &a->v[a->n]))
    return 0;
  a->n++;
  return 1;
}

/* [num|null, ...] into a scratch array of at most cap entries. */
static int jarr(const char **sp, const char *end, double *v, int cap, int *n) {
  struct nums a = {v, cap, 0};
  int ok = each_item(sp, end, '[', ']', num_item, &a);
  *n = a.n;
  return ok;
}

#define FAST_MAX_RANKS 64

/* The keys, in the order of the record's fields: their ids (a bit each to
 * refuse repeats), lengths and quoted forms all come from this one list. */
#define JSON_KEYS(X)                                                                                    \
  X(TYPE, "type") X(RUN, "run") X(GEN, "gen") X(T, "t") X(RANK, "rank") X(EPOCH, "epoch") X(ITER, "iter") \
  X(STEP, "step") X(BATCH, "batch") X(STEP_S, "step_s") X(DATA_S, "data_s") X(COMPUTE, "compute_s")       \
  X(WAIT, "wait_s") X(LOSS, "loss") X(INIT_S, "init_s") X(RDZV_S, "rdzv_s") X(RANKS, "ranks")             \
  X(NODES, "nodes") X(VAL_S, "val_s") X(CKPT_S, "ckpt_s") X(EPOCH_S, "epoch_s") X(TOTAL_S, "total_s")     \
  X(ACC, "accuracy") X(BYTES, "bytes") X(ACTION, "action") X(NODE, "node") X(ITYPE, "itype")              \
  X(PRICE, "price_h")

#define KEY_ID(id, name) K_##id,
enum key { JSON_KEYS(KEY_ID) K_NKEYS };
_Static_assert(K_NKEYS + 1 <= sizeof ((struct pit_parser *)0)->json_next_key, "json_next_key is too short");
#define KEY_LEN(id, name) sizeof(name) - 1,
static const unsigned char key_len[K_NKEYS] = {JSON_KEYS(KEY_LEN)};
/* each key in quotes, zero-padded to 16 bytes (two 8-byte words) */
#define KEY_QUOTED(id, name) "\"" name "\"",
static const char quoted_key[K_NKEYS][16] = {JSON_KEYS(KEY_QUOTED)};

/* The key's id, looked for from hint on (the key expected next): lines of one
 * log name their keys in one order, so the first compare matches and the
 * branches stay predictable (a search from the first key mispredicted about
 * once per key). */
static int key_id(const char *p, size_t n, int hint) {
  for (int i = 0, k = hint; i < K_NKEYS; i++, k = k + 1 == K_NKEYS ? 0 : k + 1)
    if (key_len[k] == n && memcmp(quoted_key[k] + 1, p, n) == 0)
      return k;
  return -1;
}

static inline uint64_t word_mask(int n) { return n >= 8 ? ~0ULL : n <= 0 ? 0 : ~0ULL >> (64 - 8 * n); }

/* Key k when the line continues with it in quotes (the key expected next: two
 * compares instead of scanning the string and searching the names), else -1. */
static inline int expected_key(const char *s, const char *end, int k) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  int n = key_len[k] + 2;
  if (end - s < 16)
    return -1;
  uint64_t a0, a1, b0, b1;
  memcpy(&a0, s, 8);
  memcpy(&a1, s + 8, 8);
  memcpy(&b0, quoted_key[k], 8);
  memcpy(&b1, quoted_key[k] + 8, 8);
  return (((a0 ^ b0) & word_mask(n)) | ((a1 ^ b1) & word_mask(n - 8))) ? -1 : k;
#else
  (void)s;
  (void)end;
  (void)k;
  return -1;
#endif
}

/* "name": number, one entry of a loss object. */
static int loss_item(void *ctx, const char **sp, const char *end) {
  struct pit_record *r = ctx;
  const char *s = *sp, *kp;
  size_t kn;
  if (r->nlosses >= PIT_MAX_LOSSES || !jstr(&s, end, &kp, &kn))
    return 0;
  for (int i = 0; i < r->nlosses; i++) /* cJSON keeps repeated names; leave those to it */
    if (strncmp(r->loss_name[i], kp, kn) == 0 && r->loss_name[i][kn < 16 ? kn : 15] == 0)
      return 0;
  ws(&s, end);
  if (s >= end || *s++ != ':')
    return 0;
  ws(&s, end);
  copy_str(r->loss_name[r->nlosses], sizeof r->loss_name[0], kp, kn);
  if (!jnum(&s, end, &r->loss_val[r->nlosses]))
    return 0;
  r->nlosses++;
  *sp = s;
  return 1;
}

/* loss: a number, or an object of named numbers. */
static int fast_loss(const char **sp, const char *end, struct pit_record *r) {
  const char *s = *sp;
  if (s < end && *s != '{') {
    if (!jnum(&s, end, &r->loss))
      return 0;
    *sp = s;
    return 1;
  }
  return each_item(sp, end, '{', '}', loss_item, r);
}

/* The fast path: FAST_OK with *r filled, or FAST_NO (r in any state). The
 * per-rank arrays are given back to set_arrays. */
static int fast_fields(struct pit_record *r, const char *s, const char *end, unsigned char *next_key,
                       double *comp, int *ncp, double *wait, int *nwp) {
  int nc = -1, nw = -1;
  unsigned seen = 0;
  int prev = K_NKEYS; /* next_key[K_NKEYS]: the first key */
  int64_t gen = 0, rank = -1, ranks = -1, nodes = -1;
  ws(&s, end);
  if (s >= end || *s++ != '{')
    return FAST_NO;
  ws(&s, end);
  if (s < end && *s == '}')
    return FAST_NO;
  for (;;) {
    const char *kp, *vp;
    size_t kn, vn;
    /* the key that followed prev on the line before (else the next id) */
    int hint = next_key[prev] ? next_key[prev] - 1 : prev + 1 < K_NKEYS ? prev + 1 : 0;
    int k = expected_key(s, end, hint);
    if (k >= 0) {
      s += key_len[k] + 2;
    } else {
      if (!jstr(&s, end, &kp, &kn) || kn == 0)
        return FAST_NO;
      k = key_id(kp, kn, hint);
    }
    if (k < 0 || (seen & (1u << k)))
      return FAST_NO;
    next_key[prev] = (unsigned char)(k + 1);
    prev = k;
    seen |= 1u << k;
    ws(&s, end);
    if (s >= end || *s++ != ':')
      return FAST_NO;
    ws(&s, end);
    int ok;
    switch (k) {
    case K_TYPE:
      if (end - s >= 8 && memcmp(s, "\"iter\"", 6) == 0) { /* the usual one */
        r->type = PIT_REC_ITER;
        s += 6;
        ok = 1;
        break;
      }
      ok = jstr(&s, end, &vp, &vn) && vn < 16;
      if (ok) {
        char t[16];
        copy_str(t, sizeof t, vp, vn);
        ok = (r->type = pit_rec_type_parse(t)) != PIT_REC_NONE;
      }
      break;
    case K_RUN:
    case K_ACTION:
    case K_NODE:
    case K_ITYPE:
      ok = jstr(&s, end, &vp, &vn);
      if (ok)
        copy_str(k == K_RUN ? r->run : k == K_ACTION ? r->action : k == K_NODE ? r->node : r->itype,
                 k == K_ACTION ? sizeof r->action : sizeof r->run, vp, vn);
      break;
    case K_GEN:    ok = jint(&s, end, &gen, 1e9); break;
    case K_RANK:   ok = jint(&s, end, &rank, 1e9); break;
    case K_RANKS:  ok = jint(&s, end, &ranks, 1e9); break;
    case K_NODES:  ok = jint(&s, end, &nodes, 1e9); break;
    case K_EPOCH:  ok = jint(&s, end, &r->epoch, 1e300); break;
    case K_ITER:   ok = jint(&s, end, &r->iter, 1e300); break;
    case K_STEP:   ok = jint(&s, end, &r->step, 1e300); break;
    case K_BATCH:  ok = jint(&s, end, &r->batch, 1e300); break;
    case K_BYTES:  ok = jint(&s, end, &r->bytes, 1e300); break;
    case K_T:      ok = jnum(&s, end, &r->t); break;
    case K_STEP_S: ok = jnum(&s, end, &r->step_s); break;
    case K_DATA_S: ok = jnum(&s, end, &r->data_s); break;
    case K_INIT_S: ok = jnum(&s, end, &r->init_s); break;
    case K_RDZV_S: ok = jnum(&s, end, &r->rdzv_s); break;
    case K_VAL_S:  ok = jnum(&s, end, &r->val_s); break;
    case K_CKPT_S: ok = jnum(&s, end, &r->ckpt_s); break;
    case K_EPOCH_S: ok = jnum(&s, end, &r->epoch_s); break;
    case K_TOTAL_S: ok = jnum(&s, end, &r->total_s); break;
    case K_ACC:    ok = jnum(&s, end, &r->accuracy); break;
    case K_PRICE:  ok = jnum(&s, end, &r->price_h); break;
    case K_COMPUTE: ok = jarr(&s, end, comp, FAST_MAX_RANKS, &nc); break;
    case K_WAIT:   ok = jarr(&s, end, wait, FAST_MAX_RANKS, &nw); break;
    case K_LOSS:   ok = fast_loss(&s, end, r); break;
    default:       ok = 0; break;
    }
    int more = ok ? next_item(&s, end, '}') : 0;
    if (more == 0)
      return FAST_NO;
    if (more == 2)
      break;
  }
  ws(&s, end);
  if (s != end || !(seen & (1u << K_TYPE)) || (nc >= 0 && nw >= 0 && nc != nw))
    return FAST_NO;
  *ncp = nc;
  *nwp = nw;
  r->gen = (int)gen;
  r->rank = (int)rank;
  r->ranks = (int)ranks;
  r->nodes = (int)nodes;
  return FAST_OK;
}

/* Reads one record by the fast path; the arrays of the record read before are
 * reused when the rank count is the same (no allocation per line). */
static int fast_record(struct pit_record *r, const char *s, const char *end, unsigned char *next_key) {
  double comp[FAST_MAX_RANKS], wait[FAST_MAX_RANKS];
  double *oc = r->compute_s, *ow = r->wait_s;
  int keep = r->nranks, nc = -1, nw = -1;
  r->compute_s = r->wait_s = NULL;
  r->nranks = 0;
  pit_record_release(r);
  int rc = fast_fields(r, s, end, next_key, comp, &nc, wait, &nw);
  int n = nc > nw ? nc : nw;
  if (rc == FAST_OK && n > 0) {
    if (keep == n) {
      r->compute_s = oc;
      r->wait_s = ow;
      r->nranks = n;
      oc = ow = NULL;
    } else if (pit_record_set_ranks(r, n)) {
      rc = FAST_NO;
    }
    for (int i = 0; i < n && rc == FAST_OK; i++) {
      r->compute_s[i] = i < nc ? comp[i] : NAN;
      r->wait_s[i] = i < nw ? wait[i] : NAN;
    }
  }
  free(oc);
  free(ow);
  return rc;
}

static int names_type(const char *s, const char *end) {
  return PL_FIND(s, end, "\"type\"") != NULL;
}

int pit_pl_json(struct pit_parser *p, const char *s, const char *end, int marked, struct pit_err *e) {
  while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  if (fast_record(&p->json, s, end, p->json_next_key) != FAST_OK) {
    struct pit_err le;
    pit_err_clear(&le);
    if (pit_record_parse(&p->json, s, (size_t)(end - s), &le) != 0) {
      if (!marked && !names_type(s, end))
        return PL_UNKNOWN;
      snprintf(p->reason, sizeof p->reason, "%.200s", le.msg);
      return PL_BAD;
    }
  }
  if (p->force_run || !p->json.run[0])
    memcpy(p->json.run, p->run, sizeof p->run);
  int rc = pit_pl_flush(p, e);
  if (!rc)
    rc = pit_pl_emit(p, &p->json, e);
  return rc ? rc : PL_RECORD;
}

int pit_parse_json_record(struct pit_record *r, const char *s, size_t len, struct pit_err *e) {
  unsigned char next_key[K_NKEYS + 1] = {0};
  if (fast_record(r, s, s + len, next_key) == FAST_OK)
    return 0;
  return pit_record_parse(r, s, len, e);
}

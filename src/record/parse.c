/* parse.c — the log parser's core: line dispatch (tag prefixes, PITSTOP marker),
 * merging of lines that repeat one iteration, step numbering, statistics, and
 * reading whole files in big blocks (any line length, NUL bytes, CRLF, a last
 * line without '\n'). Numbers: parse_num.c. Formats: parse_{json,dcgan,sagemaker,
 * csv,pi}.c; a file that starts as a YAML block mapping is read whole by parse_yaml.c.
 *
 * Invariants: every line ends in exactly one of known/skipped/malformed; no
 * allocation per log line; the held record is emitted before any later one, so
 * records come out in log order.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/parse_impl.h"

static const char *format_names[PIT_PARSE_NFORMATS] = {"auto", "jsonl", "sagemaker", "csv",
                                                       "dcgan", "pi",   "yaml"};

int pit_parse_format_from_name(const char *name, enum pit_parse_format *f) {
  for (int i = 0; i < PIT_PARSE_NFORMATS; i++)
    if (strcmp(name, format_names[i]) == 0) {
      *f = (enum pit_parse_format)i;
      return 0;
    }
  return PIT_EARG;
}

const char *pit_parse_format_name(enum pit_parse_format f) {
  return (f >= 0 && f < PIT_PARSE_NFORMATS) ? format_names[f] : "auto";
}

void pit_parse_run_name(const char *path, char *out, size_t cap) {
  if (strcmp(path, "-") == 0) {
    snprintf(out, cap, "stdin");
    return;
  }
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t n = strlen(b);
  const char *dot = strrchr(b, '.');
  if (dot && dot != b)
    n = (size_t)(dot - b);
  if (n == 0) {
    b = "log";
    n = 3;
  }
  pl_copy_name(out, cap, b, n);
}

/* ---------- records ---------- */

void pit_pl_new(struct pit_parser *p, enum pit_rec_type t, int rank) {
  *p->cur = p->blank; /* one copy of a record initialised once, run set */
  p->cur->type = t;
  p->cur->rank = rank;
}

struct pit_pl_rank *pit_pl_rank(struct pit_parser *p, int rank) {
  if (rank < -1 || rank > 1000000)
    return NULL;
  int i = rank + 1;
  if (i >= p->nranks) {
    size_t n = (size_t)p->nranks;
    if (PIT_GROW(p->ranks, i + 1, n))
      return NULL;
    for (size_t k = (size_t)p->nranks; k < n; k++)
      p->ranks[k] = (struct pit_pl_rank){-1, 0, -1, NAN, -1};
    p->nranks = (int)n;
  }
  return &p->ranks[i];
}

int pit_pl_emit(struct pit_parser *p, struct pit_record *r, struct pit_err *e) {
  p->have_times |= r->type == PIT_REC_ITER && !isnan(r->step_s);
  int rc = p->emit ? p->emit(p->ctx, r, e) : 0;
  if (rc)
    return rc < 0 ? rc : PIT_ESTATE;
  p->st.records++;
  return 0;
}

/* The job's context as an init record's config: global batch, batch per rank,
 * ranks, iterations per epoch, instance type (those known); 0 if none is. */
static int init_config(struct pit_parser *p) {
  char *o = p->init_config;
  size_t cap = sizeof p->init_config, n = 0;
  const char *sep = "{";
#define CFG(...) (n += (size_t)snprintf(o + n, n < cap ? cap - n : 0, __VA_ARGS__), sep = ",")
  if (p->batch_per_rank > 0 && p->world > 0)
    CFG("%s\"batch\":%lld", sep, (long long)(p->batch_per_rank * p->world));
  if (p->batch_per_rank > 0)
    CFG("%s\"batch_per_rank\":%lld", sep, (long long)p->batch_per_rank);
  if (p->world > 0)
    CFG("%s\"ranks\":%d", sep, p->world);
  if (p->world > 0 && p->rpn_given > 0)
    CFG("%s\"nodes\":%d,\"nodes_from\":\"--ranks-per-node\"", sep, (p->world + p->rpn_given - 1) / p->rpn_given);
  if (p->per_epoch > 0)
    CFG("%s\"iters_per_epoch\":%lld", sep, (long long)p->per_epoch);
  if (p->epochs > 0)
    CFG("%s\"epochs\":%lld", sep, (long long)p->epochs);
  if (p->itype[0])
    CFG("%s\"itype\":\"%s\"", sep, p->itype);
  if (p->batch_given > 0 && !p->batch_logged)
    CFG("%s\"batch_from\":\"--batch-size\"", sep);
#undef CFG
  if (n == 0 || n + 2 > cap)
    return 0;
  memcpy(o + n, "}", 2);
  return 1;
}

int pit_pl_flush(struct pit_parser *p, struct pit_err *e) {
  if (!p->have_pend)
    return 0;
  p->have_pend = 0;
  /* an init line is held until the next record: the iteration lines after it
   * have told the iterations per epoch by then */
  return p->pend->type == PIT_REC_INIT ? pit_pl_emit_init(p, p->pend, e) : pit_pl_emit(p, p->pend, e);
}

int pit_pl_emit_init(struct pit_parser *p, struct pit_record *r, struct pit_err *e) {
  if (r->config || !init_config(p))
    return pit_pl_emit(p, r, e);
  r->config = p->init_config;
  int rc = pit_pl_emit(p, r, e);
  r->config = NULL;
  return rc;
}

static int take_time(double *dst, int *dst_digits, double v, int digits) {
  if (isnan(v) || (!isnan(*dst) && digits <= *dst_digits))
    return 0;
  *dst = v;
  *dst_digits = digits;
  return 1;
}

int pit_pl_put(struct pit_parser *p, enum pit_pl_kind kind, int digits, struct pit_err *e) {
  struct pit_record *r = p->cur, *q = p->pend;
  unsigned bit = 1u << kind;
  if (p->have_pend && !(p->pend_kinds & bit) && q->type == r->type) {
    if (kind == K_DC_ITIME && q->type == PIT_REC_ITER) { /* the precise twin of the line before */
      take_time(&q->step_s, &p->pend_digits, r->step_s, digits);
      p->pend_kinds |= bit;
      return PL_MERGED;
    }
    int same = q->rank == r->rank && q->epoch >= 0 && q->epoch == r->epoch &&
               (q->type == PIT_REC_EPOCH || (q->type == PIT_REC_ITER && q->iter >= 0 && q->iter == r->iter));
    if (same) {
      if (isnan(q->t))
        q->t = r->t;
      if (q->type == PIT_REC_ITER) {
        take_time(&q->step_s, &p->pend_digits, r->step_s, digits);
        if (q->nlosses == 0 && isnan(q->loss)) {
          q->loss = r->loss;
          q->nlosses = r->nlosses;
          memcpy(q->loss_name, r->loss_name, sizeof q->loss_name);
          memcpy(q->loss_val, r->loss_val, sizeof q->loss_val);
        }
        if (q->batch < 0)
          q->batch = r->batch;
      } else {
        take_time(&q->epoch_s, &p->pend_digits, r->epoch_s, digits);
      }
      p->pend_kinds |= bit;
      return PL_MERGED;
    }
  }
  int rc = pit_pl_flush(p, e);
  if (rc)
    return rc;
  if (r->type == PIT_REC_ITER && r->step < 0) {
    struct pit_pl_rank *rs = pit_pl_rank(p, r->rank);
    if (!rs)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    if (rs->per_epoch > 0 && r->epoch >= 0 && r->iter >= 0)
      r->step = r->epoch * rs->per_epoch + r->iter;
    else
      r->step = rs->next_step;
    rs->next_step = r->step + 1;
  }
  p->have_times |= r->type == PIT_REC_ITER && !isnan(r->step_s);
  p->pend = r; /* hold the new record: swap the slots */
  p->cur = q;
  p->have_pend = 1;
  p->pend_kinds = bit;
  p->pend_digits = digits;
  return PL_RECORD;
}

/* ---------- lines ---------- */

int pit_parser_new(struct pit_parser **pp, enum pit_parse_format f, const char *run, int force_run,
                   const char *file, pit_parse_emit_fn emit, pit_parse_warn_fn warn, void *ctx,
                   struct pit_err *e) {
  struct pit_parser *p = calloc(1, sizeof *p);
  if (!p || !(p->file = strdup(file ? file : "-"))) {
    free(p);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  p->fmt = f;
  snprintf(p->run, sizeof p->run, "%s", run ? run : "");
  p->force_run = force_run;
  p->emit = emit;
  p->warn = warn;
  p->ctx = ctx;
  p->cur = &p->slot[0];
  p->pend = &p->slot[1];
  pit_record_init(&p->blank);
  memcpy(p->blank.run, p->run, sizeof p->run);
  pit_record_init(p->cur);
  pit_record_init(p->pend);
  pit_record_init(&p->json);
  p->batch_per_rank = p->batch_given = -1;
  p->world = p->rpn_given = -1;
  p->per_epoch = -1;
  p->epochs = -1;
  p->seg_rank = -1;
  p->kv_epoch_start = -1;
  p->kv_epoch_base = -1;
  p->kv_gbatch = -1;
  p->kv_clock0 = NAN;
  *pp = p;
  return 0;
}

void pit_parser_free(struct pit_parser *p) {
  if (!p)
    return;
  pit_record_release(&p->json);
  pit_pattern_free(p->pattern);
  free(p->ranks);
  free(p->file);
  free(p);
}

const struct pit_parse_stats *pit_parser_stats(const struct pit_parser *p) { return &p->st; }

int pit_parser_finish(struct pit_parser *p, struct pit_err *e) { return pit_pl_flush(p, e); }

/* The rank a tag names: "[GPU1]", "[rank3]", "[worker 2]", torchrun's "[default1]:"
 * (colon: any word), mpirun's "[0,1]<stdout>:" (job, rank); -1 for others ("[MO833]"). */
static int tag_rank(const char *a, const char *q, int colon, int mpirun) {
  const char *d = q;
  while (d > a && pl_isdigit(d[-1]))
    d--;
  if (d == q || q - d > 7)
    return -1;
  if (mpirun) {
    if (d[-1] != ',')
      return -1;
  } else {
    const char *w = d;
    while (w > a && w[-1] == ' ')
      w--;
    size_t n = (size_t)(w - a);
    char low[8];
    if (n == 0 || n >= sizeof low)
      return -1;
    for (size_t i = 0; i < n; i++)
      low[i] = (char)(a[i] | 0x20);
    low[n] = 0;
    if (!colon && strcmp(low, "gpu") && strcmp(low, "rank") && strcmp(low, "worker") && strcmp(low, "proc"))
      return -1;
    for (size_t i = 0; i < n; i++)
      if (low[i] < 'a' || low[i] > 'z')
        return -1;
  }
  int r = 0;
  for (; d < q; d++)
    r = r * 10 + (*d - '0');
  return r;
}

/* Strips tags before the text: "[MO833] ", mpirun's "[1,0]<stdout>:", torchrun's
 * "[default0]:" (not [PI-INFO]); a tag naming a rank sets p->seg_rank. */
static const char *strip_tags(struct pit_parser *p, const char *s, const char *end) {
  for (int k = 0; k < 4 && s < end && *s == '['; k++) {
    const char *q = s + 1;
    while (q < end && q - s <= 33 &&
           ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || pl_isdigit(*q) || *q == '_' ||
            *q == '-' || *q == '.' || *q == ',' || *q == ' '))
      q++;
    if (q >= end || *q != ']' || q == s + 1 || q - s > 33 || s[1] == ' ' || q[-1] == ' ')
      break;
    if (q - s == 8 && memcmp(s + 1, "PI-INFO", 7) == 0)
      break;
    const char *tag = s + 1, *tag_end = q;
    if (memchr(tag, ' ', (size_t)(tag_end - tag)) && !pl_isdigit(tag_end[-1]))
      break; /* "[epoch 3]": words, not a tag */
    q++;
    int mpirun = 0, colon = 0;
    if (PL_LIT(&q, end, "<stdout>:") || PL_LIT(&q, end, "<stderr>:"))
      mpirun = 1;
    else if (q < end && *q == ':')
      colon = 1, q++;
    int r = tag_rank(tag, tag_end, colon, mpirun);
    if (r >= 0)
      p->seg_rank = r;
    pl_ws(&q, end);
    s = q;
  }
  return s;
}

/* "PITSTOP {" within the first 256 bytes, at the start or after a separator. */
static const char *find_marker(const char *s, const char *end) {
  const char *lim = end - s > 256 ? s + 256 : end;
  for (const char *q = s; q < lim; q++) {
    q = memchr(q, 'P', (size_t)(lim - q));
    if (!q)
      return NULL;
    if ((q == s || strchr(" \t:]>|", q[-1])) && end - q >= 8 && memcmp(q, "PITSTOP ", 8) == 0) {
      const char *j = q + 8;
      pl_ws(&j, end);
      if (j < end && *j == '{')
        return j;
    }
  }
  return NULL;
}

static int allows(const struct pit_parser *p, enum pit_parse_format f) {
  return p->fmt == PIT_PARSE_AUTO || p->fmt == f;
}

static const char *const openers[] = {"[epoch: ", "[rank: ", "[Rank: ", "Rank: ", "Rank,", "[PI-INFO] ", "PITSTOP {",
                                      "Iteration time: "};

const char *pit_pl_find_opener(const char *s, const char *end, int after_word) {
  for (const char *q = s; q < end; q++) {
    char c = *q;
    if (c != '[' && c != 'R' && c != 'P' && c != 'I')
      continue;
    for (size_t k = 0; k < sizeof openers / sizeof *openers; k++) {
      size_t n = strlen(openers[k]);
      if (openers[k][0] == c && (size_t)(end - q) >= n && memcmp(q, openers[k], n) == 0) {
        if (!after_word && c == 'R' && q > s && ((q[-1] | 0x20) >= 'a' && (q[-1] | 0x20) <= 'z'))
          break; /* "FooRank: " is a word */
        return q;
      }
    }
  }
  return NULL;
}

static int dispatch(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  int v = PL_UNKNOWN;
  char c = *s;
  if (p->pattern) {
    p->reader = "pattern";
    if ((v = pit_pl_pattern(p, s, end, e)) != PL_UNKNOWN)
      return v;
  }
  if (c == '{') {
    p->reader = "jsonl";
    if (allows(p, PIT_PARSE_JSONL) && (v = pit_pl_json(p, s, end, 0, e)) != PL_UNKNOWN)
      return v;
    goto generic; /* someone else's JSON: {"epoch": 3, "step_time": 0.5} */
  }
  if (c == '[' && end - s > 10 && memcmp(s, "[PI-INFO] ", 10) == 0) {
    p->reader = "pi";
    return allows(p, PIT_PARSE_PI) ? pit_pl_pi(p, s + 10, end, e) : PL_UNKNOWN;
  }
  p->reader = "dcgan";
  if (allows(p, PIT_PARSE_DCGAN) && (v = pit_pl_dcgan(p, s, end, e)) != PL_UNKNOWN)
    return v;
  p->reader = "sagemaker";
  if (allows(p, PIT_PARSE_SAGEMAKER) && (v = pit_pl_sagemaker(p, s, end, e)) != PL_UNKNOWN)
    return v;
  p->reader = "csv";
  if (allows(p, PIT_PARSE_CSV) && (v = pit_pl_csv(p, s, end, e)) != PL_UNKNOWN)
    return v;
  if (allows(p, PIT_PARSE_JSONL)) {
    const char *j = find_marker(s, end);
    p->reader = "jsonl";
    if (j)
      return pit_pl_json(p, j, end, 1, e);
  }
generic:
  p->reader = NULL;
  if (p->fmt != PIT_PARSE_AUTO)
    return PL_UNKNOWN;
  /* a named line glued after text no reader took: the text before it is cut */
  const char *q = pit_pl_find_opener(s + 1, end, 0);
  const char *cr = memchr(s, '\r', (size_t)((q ? q : end) - s));
  if (cr) { /* tqdm's updates of one line, '\r' between */
    p->next = cr + 1;
    end = cr;
    while (end > s && end[-1] == '\b') /* Keras 2 erases its bar with backspaces before the '\r' */
      end--;
  } else if (q) {
    p->next = q;
    p->next_glued = 1;
    end = q;
  }
  for (const char *b = s; b < end; b++)
    if (((unsigned char)*b < 0x20 && *b != '\t') || *b == 0x7f) { /* control bytes: not a text line */
      snprintf(p->reason, sizeof p->reason, "not text (control or NUL bytes)");
      return PL_UNKNOWN;
    }
  p->reader = "kv";
  v = pit_pl_kv(p, s, end, e);
  if (v == PL_RECORD || v == PL_INFO || v == PL_MERGED)
    p->st.generic++;
  if (v == PL_UNKNOWN) {
    p->reader = NULL;
    if (q && !cr) {
      snprintf(p->reason, sizeof p->reason, "cut: another line is glued to it at byte %ld", (long)(q - s) + 1);
      return PL_CUT;
    }
  }
  return v;
}

/* Whether a skipped line looks like a timing line: a number right after a word
 * "time" or "took" (any case; "times"; then at most four of ` :=,('"`). Only
 * unknown lines get here (off the hot path), scanned 8 bytes at a time. */
/* Whether "time"/"took" (any case) at q is followed by a number. */
static int timing_at(const char *q, const char *end) {
  uint32_t w;
  memcpy(&w, q, 4);
  w |= 0x20202020u;
  if (memcmp(&w, "time", 4) != 0 && memcmp(&w, "took", 4) != 0)
    return 0;
  const char *a = q + 4;
  if (a < end && (*a | 0x20) == 's') /* "times" */
    a++;
  for (int gap = 0; a < end && gap < 4 && strchr(" \t:=,('\"", *a) && *a; gap++)
    a++;
  return a < end && (pl_isdigit(*a) || (*a == '.' && a + 1 < end && pl_isdigit(a[1])));
}

static int looks_timing(const char *s, const char *end) {
  const char *q = s;
  /* 8 bytes at a time: the bytes that are 't' or 'T' (a byte past a true one
   * may be flagged too: every flag is checked) */
  for (; end - q >= 11; q += 8) {
    uint64_t v;
    memcpy(&v, q, 8);
    v = (v | 0x2020202020202020ULL) ^ 0x7474747474747474ULL;
    uint64_t m = (v - 0x0101010101010101ULL) & ~v & 0x8080808080808080ULL;
    while (m) {
      int i = __builtin_ctzll(m) >> 3;
      if (timing_at(q + i, end))
        return 1;
      m &= m - 1;
    }
  }
  for (; end - q >= 4; q++)
    if ((*q | 0x20) == 't' && timing_at(q, end))
      return 1;
  return 0;
}

/* Warns "file:line: <what>: '<the first 56 bytes of [s, end)>'" with code. */
static void warn_text(struct pit_parser *p, int code, const char *what, const char *s, const char *end) {
  char text[64];
  size_t n = 0;
  for (const char *q = s; q < end && n < 56; q++)
    text[n++] = (*q >= 0x20 && *q < 0x7f) ? *q : '?';
  text[n] = 0;
  struct pit_err w;
  pit_err_clear(&w);
  pit_err_set(&w, code, "%s:%ld: %s: '%s%s'", p->file, p->st.lines, what, text, (end - s) > 56 ? "..." : "");
  p->warn(p->ctx, &w);
}

/* A skipped line that looks like a timing line: counted; the first three are
 * named file:line through the warn callback (a silent loss cannot happen). */
static void unrecognised(struct pit_parser *p, const char *s, const char *end) {
  if (++p->st.unrecognised > 3 || !p->warn)
    return;
  warn_text(p, PIT_ENOTFOUND, "looks like a timing line but matches no format", s, end);
}

static void explain(struct pit_parser *p, int part, const char *s, const char *end, int v) {
  static const char *const skip_why = "no reader knows it";
  struct pit_parse_part x;
  memset(&x, 0, sizeof x);
  x.line = p->st.lines;
  x.part = part;
  x.text = s;
  x.len = (size_t)(end - s);
  x.reader = p->reader;
  x.why = "";
  x.info = "";
  switch (v) {
  case PL_RECORD:
  case PL_MERGED:
    x.use = v == PL_RECORD ? PIT_USE_RECORD : PIT_USE_MERGED;
    x.rec = p->have_pend ? p->pend : NULL;
    break;
  case PL_INFO:
    x.use = PIT_USE_CONTEXT;
    x.info = p->info;
    break;
  case PL_BAD:
    x.use = PIT_USE_MALFORMED;
    x.why = p->reason;
    break;
  case PL_CUT:
    x.use = PIT_USE_CUT;
    x.why = p->reason;
    break;
  default:
    x.use = PIT_USE_SKIPPED;
    x.why = s == end ? "blank" : p->reason[0] ? p->reason : skip_why;
    x.reader = NULL;
  }
  x.epoch_start = p->kv_epoch_start >= 0;
  x.epoch_started = p->kv_epoch_start;
  p->explain(p->explain_ctx, &x);
}

/* A part that is not whole: counted, and named through warn (the first 20 go to the
 * command's stderr with the malformed lines). */
static void report_cut(struct pit_parser *p, const char *s, const char *end) {
  p->st.cut++;
  if (p->warn)
    warn_text(p, PIT_EFORMAT, "part of a line with another line glued into it, not read", s, end);
}

/* Whether [s, end) is text: no NUL, no C0 control byte but tab, backspace,
 * form feed, vertical tab, carriage return and escape, no DEL, and at most one
 * byte in 16 outside valid UTF-8 (a stray Latin-1 'µ' passes; random bytes,
 * about half of them outside UTF-8, do not). */
static int is_text(const unsigned char *s, const unsigned char *end) {
  size_t bad = 0, n = (size_t)(end - s);
  while (s < end) {
    unsigned c = *s;
    if (c < 0x80) {
      int allowed = c == '\t' || c == '\b' || c == '\f' || c == '\v' || c == '\r' || c == 0x1b;
      if (c == 0 || c == 0x7f || (c < 0x20 && !allowed))
        return 0;
      s++;
      continue;
    }
    /* a UTF-8 sequence: 2 to 4 bytes, continuation bytes 10xxxxxx */
    int k = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    int ok = k > 0 && end - s > k;
    for (int i = 1; ok && i <= k; i++)
      ok = (s[i] & 0xc0) == 0x80;
    if (ok) {
      s += k + 1;
    } else {
      bad++;
      s++;
    }
  }
  return bad * 16 <= n;
}

/* Reads one line's text [line, line + len): its parts (lines glued together),
 * each through the readers; adds the parts known, malformed and merged, and
 * numbers the parts from *nparts on (for --explain; *nparts is then the next). */
static int read_text(struct pit_parser *p, const char *line, size_t len, int *nparts, int *known, int *bad,
                     int *merged, struct pit_err *e) {
  const char *end = line + len, *s = line;
  int part = *nparts;
  for (;; part++) {
    p->tail = p->next = NULL;
    p->next_glued = 0;
    p->seg_rank = -1;
    p->reason[0] = 0;
    p->info[0] = 0;
    p->kv_epoch_start = -1;
    pl_ws(&s, end);
    const char *t = s;
    if (t < end && *t == '[')
      t = strip_tags(p, t, end);
    p->reader = NULL;
    int v = t < end ? dispatch(p, t, end, e) : PL_UNKNOWN;
    if (v < 0)
      return v; /* an emit error */
    const char *seg_end = p->next ? p->next : end;
    if ((v == PL_RECORD || v == PL_MERGED || v == PL_INFO) && p->tail && !p->next) {
      /* a family read its record up to tail: another line glued after it? */
      const char *q = pit_pl_find_opener(p->tail, end, 1);
      if (q) {
        p->next = seg_end = q;
        p->next_glued = 1;
      }
    }
    if (p->next && p->next_glued)
      p->st.glued += part == 0;
    switch (v) {
    case PL_UNKNOWN:
      break;
    case PL_MERGED:
      (*merged)++;
      /* fall through */
    case PL_INFO:
    case PL_RECORD:
      (*known)++;
      break;
    case PL_CUT:
      report_cut(p, s, seg_end);
      (*bad)++;
      break;
    default: /* PL_BAD */
      (*bad)++;
      if (p->warn) {
        struct pit_err w;
        pit_err_clear(&w);
        pit_err_set(&w, PIT_EFORMAT, "%s:%ld: %s%s", p->file, p->st.lines, p->reason,
                    p->partial ? " (last line has no newline: truncated?)" : "");
        p->warn(p->ctx, &w);
      }
    }
    if (p->explain && (s < seg_end || part == 0))
      explain(p, part, s, seg_end, v);
    if (!p->next || p->next >= end)
      break;
    s = p->next;
  }
  *nparts = part + 1;
  return 0;
}

/* A part of a line with NUL bytes that is not text, or too short to be told
 * from chance: skipped, with its reason for --explain. */
static void skip_binary(struct pit_parser *p, int part, const char *s, const char *end) {
  if (!p->explain)
    return;
  snprintf(p->reason, sizeof p->reason, "binary bytes (NUL, control or not UTF-8)");
  explain(p, part, s, end, PL_UNKNOWN);
}

/* bytes: 16 random bytes pass is_text about once in 10^5 (each byte is text with p ~0.4,
 * one in 16 may be bad), and must then read as a record too */
#define NUL_PART_MIN 16

int pit_parser_line(struct pit_parser *p, const char *line, size_t len, struct pit_err *e) {
  p->st.lines++;
  if (len && line[len - 1] == '\r')
    len--;
  int known = 0, bad = 0, merged = 0, rc = 0, nparts = 0;
  const char *nul = p->nul_counted || !len ? NULL : memchr(line, 0, len);
  if (!nul) {
    const unsigned char *u = (const unsigned char *)line;
    if (!p->nul_counted && !is_text(u, u + len)) {
      /* read live or from stdin: a line of random bytes without a NUL */
      skip_binary(p, 0, line, line + len);
      len = 0;
    } else {
      rc = read_text(p, line, len, &nparts, &known, &bad, &merged, e);
    }
  } else {
    /* NUL bytes split the line: each part between them is read when it is text
     * and at least NUL_PART_MIN bytes long, so NUL padding that a crash leaves
     * before a log's next line costs nothing, and random bytes that happen to
     * spell '6/1' give no record */
    p->st.nul_lines++;
    const char *end = line + len;
    while (line < end && !rc) {
      const char *q = memchr(line, 0, (size_t)(end - line));
      if (!q)
        q = end;
      const unsigned char *u = (const unsigned char *)line;
      if (q - line >= NUL_PART_MIN && is_text(u, (const unsigned char *)q))
        rc = read_text(p, line, (size_t)(q - line), &nparts, &known, &bad, &merged, e);
      else if (q > line)
        skip_binary(p, nparts++, line, q);
      for (line = q; line < end && !*line; line++)
        ;
    }
    line = end; /* no unrecognised-timing check on such a line */
    len = 0;
  }
  if (rc < 0)
    return rc;
  p->st.merged += merged;
  if (known)
    p->st.known++;
  else if (bad)
    p->st.malformed++;
  else {
    p->st.skipped++;
    const char *s = line, *end = line + len;
    pl_ws(&s, end);
    if (s < end && looks_timing(s, end))
      unrecognised(p, s, end);
  }
  return 0;
}

void pit_parser_job_length(const struct pit_parser *p, int64_t *epochs, int64_t *iters, int *samples) {
  *epochs = p->epochs;
  *iters = p->per_epoch;
  if (samples)
    *samples = p->progress_samples;
}

void pit_parser_set_explain(struct pit_parser *p, pit_parse_explain_fn fn, void *ctx) {
  p->explain = fn;
  p->explain_ctx = ctx;
}

/* ---------- files ---------- */

#define READ_BLOCK (1u << 20) /* stays in a 2 MiB L2 while parsed: 4 MiB blocks were ~3% slower */
#define MAX_LINE (1u << 30)

int pit_parser_set_itype(struct pit_parser *p, const char *itype, struct pit_err *e) {
  size_t n = itype ? strlen(itype) : 0;
  if (n >= sizeof p->itype)
    return pit_err_set(e, PIT_EARG, "instance type '%.20s...' is too long", itype);
  if (!pl_name_ok(itype, n))
    return pit_err_set(e, PIT_EARG, "instance type '%s': only letters, digits and '._-'", itype);
  memcpy(p->itype, itype ? itype : "", n + 1);
  return 0;
}

int pit_parser_set_batch(struct pit_parser *p, int64_t per_rank, struct pit_err *e) {
  if (per_rank == 0 || per_rank < -1 || per_rank > (int64_t)1e12)
    return pit_err_set(e, PIT_EARG, "batch size %lld: a positive count of samples per rank", (long long)per_rank);
  p->batch_given = per_rank;
  if (!p->batch_logged)
    p->batch_per_rank = per_rank;
  return 0;
}

int pit_parser_set_ranks_per_node(struct pit_parser *p, int rpn, struct pit_err *e) {
  if (rpn == 0 || rpn < -1 || rpn > 1000000)
    return pit_err_set(e, PIT_EARG, "%d ranks per node: a positive count", rpn);
  p->rpn_given = rpn;
  return 0;
}

int pit_parse_file(const char *path, enum pit_parse_format f, const char *run, int force_run,
                   pit_parse_emit_fn emit, pit_parse_warn_fn warn, void *ctx,
                   struct pit_parse_stats *stats, struct pit_err *e) {
  return pit_parse_file_itype(path, f, run, force_run, NULL, emit, warn, ctx, stats, e);
}

int pit_parse_file_itype(const char *path, enum pit_parse_format f, const char *run, int force_run,
                         const char *itype, pit_parse_emit_fn emit, pit_parse_warn_fn warn, void *ctx,
                         struct pit_parse_stats *stats, struct pit_err *e) {
  struct pit_parse_opts o = {f, run, force_run, itype, -1, -1, NULL, NULL, NULL};
  return pit_parse_file_opts(path, &o, emit, warn, ctx, stats, e);
}

/* The rest of fd after the have bytes in *buf (capacity *cap), for a file read whole. */
static int read_rest(int fd, const char *path, char **buf, size_t *cap, size_t *have, struct pit_err *e) {
  for (;;) {
    if (*have == *cap) {
      if (*cap >= MAX_LINE)
        return pit_err_set(e, PIT_EFORMAT, "'%s': a YAML file larger than %u bytes", path, MAX_LINE);
      if (PIT_GROW(*buf, *cap + 1, *cap))
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    ssize_t n = read(fd, *buf + *have, *cap - *have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return pit_err_errno(e, PIT_EIO, "cannot read '%s'", path);
    if (n == 0)
      return 0;
    *have += (size_t)n;
  }
}

int pit_parse_file_opts(const char *path, const struct pit_parse_opts *o, pit_parse_emit_fn emit,
                        pit_parse_warn_fn warn, void *ctx, struct pit_parse_stats *stats, struct pit_err *e) {
  enum pit_parse_format f = o->format;
  const char *run = o->run;
  int force_run = o->force_run;
  int stdin_ = strcmp(path, "-") == 0;
  int fd = stdin_ ? 0 : open(path, O_RDONLY);
  if (fd < 0)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open '%s'", path);
  struct stat sb;
  if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    if (!stdin_)
      close(fd);
    return pit_err_set(e, PIT_EIO, "cannot read '%s': it is a directory", path);
  }
  char runbuf[PIT_NAME_MAX];
  if (!run) {
    pit_parse_run_name(path, runbuf, sizeof runbuf);
    run = runbuf;
  }
  struct pit_parser *p = NULL;
  int rc = pit_parser_new(&p, f, run, force_run, stdin_ ? "<stdin>" : path, emit, warn, ctx, e);
  if (!rc)
    rc = pit_parser_set_itype(p, o->itype, e);
  if (!rc && o->batch_per_rank != -1)
    rc = pit_parser_set_batch(p, o->batch_per_rank, e);
  if (!rc && o->ranks_per_node != -1)
    rc = pit_parser_set_ranks_per_node(p, o->ranks_per_node, e);
  if (!rc && o->pattern)
    rc = pit_parser_set_pattern(p, o->pattern, e);
  if (!rc && o->explain)
    pit_parser_set_explain(p, o->explain, o->explain_ctx);
  size_t cap = READ_BLOCK, have = 0, searched = 0;
  char *buf = rc ? NULL : malloc(cap);
  if (!rc && !buf)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  int eof = 0, buf_nul = 0;
  while (!rc && !eof) {
    if (have == cap) { /* one line fills the buffer: grow it */
      if (cap >= MAX_LINE) {
        rc = pit_err_set(e, PIT_EFORMAT, "%s:%ld: line longer than %u bytes", path, p->st.lines + 1,
                         MAX_LINE);
        break;
      }
      if (PIT_GROW(buf, cap + 1, cap)) {
        rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
        break;
      }
    }
    ssize_t n = read(fd, buf + have, cap - have);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      rc = pit_err_errno(e, PIT_EIO, "cannot read '%s'", path);
      break;
    }
    if (n == 0)
      eof = 1;
    /* lines are checked for NUL bytes one by one only while the buffer may hold one */
    buf_nul |= n > 0 && memchr(buf + have, 0, (size_t)n) != NULL;
    p->nul_counted = !buf_nul;
    have += (size_t)n;
    if (p->st.lines == 0 && have == (size_t)n && (f == PIT_PARSE_YAML || (f == PIT_PARSE_AUTO && pit_pl_yaml_claims(buf, have)))) {
      /* the first block: a YAML document is read whole, not line by line */
      if (!eof && (rc = read_rest(fd, path, &buf, &cap, &have, e)))
        break;
      rc = pit_parser_yaml(p, buf, have, e);
      have = 0;
      break;
    }
    size_t start = 0;
    for (;;) {
      char *nl = memchr(buf + searched, '\n', have - searched);
      if (!nl)
        break;
      size_t at = (size_t)(nl - buf);
      if ((rc = pit_parser_line(p, buf + start, at - start, e)))
        break;
      start = searched = at + 1;
    }
    if (rc)
      break;
    if (eof && start < have) {
      p->partial = 1;
      rc = pit_parser_line(p, buf + start, have - start, e);
      start = have;
    }
    memmove(buf, buf + start, have - start);
    have -= start;
    searched = have;
    if (have == 0)
      buf_nul = 0;
  }
  if (!rc)
    rc = pit_parser_finish(p, e);
  if (stats && p) {
    *stats = p->st;
    stats->context[0] = 0;
    if (init_config(p))
      snprintf(stats->context, sizeof stats->context, "%s", p->init_config);
  }
  pit_parser_free(p);
  free(buf);
  if (!stdin_)
    close(fd);
  return rc;
}

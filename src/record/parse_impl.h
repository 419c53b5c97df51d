/* parse_impl.h — internals shared by the log parsers (src/record/parse*.c).
 *
 * A line is matched by hand with a cursor (no regex): each family's function
 * gets the line after its tag prefix and returns one PL_* verdict. A family
 * claims a line only once the line's distinctive prefix matched; after that a
 * mismatch is PL_BAD (malformed) with p->reason set. Records are built in
 * *p->cur and handed to pit_pl_put(), which folds a line repeating the held
 * record's iteration into it or emits the held record and holds the new one.
 */
#ifndef PIT_RECORD_PARSE_IMPL_H
#define PIT_RECORD_PARSE_IMPL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pitstop/parse.h"

/* PL_CUT: the text is part of a line that another line was glued into (neither
 * whole); counted and reported, never read. */
enum pit_pl_verdict { PL_UNKNOWN = 0, PL_INFO, PL_RECORD, PL_MERGED, PL_BAD, PL_CUT };

/* Line kinds that may describe the same iteration or epoch (merging only joins different kinds). */
enum pit_pl_kind {
  K_JSON = 0,
  K_DC_BRACKET,    /* [epoch: e/N][iteration: i/L][rank: r] ... iteration time: Xs */
  K_DC_COLON,      /* Rank: r, Epoch: e, iteration: i/L, It. time: Xs, Elapsed time: Y s */
  K_DC_CSV,        /* Rank,r,Epoch,e,Iteration,i,It. time,X,Elapsed time,Y */
  K_DC_ITIME,      /* Iteration time: X */
  K_DC_TOOK,       /* [rank: r] Epoch e took: X seconds */
  K_DC_CSV_EPOCH,  /* Rank,r,Epoch,e,Epoch time,X,Elapsed time,Y */
  K_DC_COLON_EPOCH, /* Rank: r, Epoch: e, Epoch time: Xs, Elapsed time: Y s */
  K_KV,            /* the key/value reader and --pattern (parse_kv.c) */
  K_OTHER
};

struct pit_pl_rank {
  int64_t per_epoch;  /* iterations per epoch, -1 unknown */
  int64_t next_step;  /* step of the next new iteration when per_epoch is unknown */
  int64_t kv_epoch;   /* parse_kv.c: the last epoch an epoch-start line began, -1 none */
  double kv_clock;    /* parse_kv.c: the clock (a line's timestamp) of the rank's last record timed by it, NaN none */
  int64_t kv_clock_step; /* its step */
};

/* What a key/value line or a --pattern match said (-1 / NaN: not said). */
struct pit_kv {
  int rank;
  int64_t epoch, epochs, iter, iters, step, batch;
  int64_t gbatch;     /* the global batch ("global batch size", "train_batch_size") */
  double step_s, epoch_s, val_s, data_s, t, loss;
  double srate;       /* samples per second of this step ("CurrSamplesPerSec"): a time with the global batch */
  double clock;       /* the line's own timestamp ("2024-05-01 10:00:02,500"), seconds; NaN none */
  double bare_s;      /* a time with a unit and no key ("- 5s 2ms/step"): the epoch's on a complete count */
  int epoch_alone;    /* the line is "Epoch e/N" and nothing else: an epoch begins, counted as printed */
  int epoch_from1;    /* the epoch was written "Epoch [e]" (mmcv) or "E|S|" (torchtune), counted from 1 */
  int val_line;       /* "Epoch(val)", "Iter(test)" (mmengine): a validation iteration, not a training one */
  double total_s;     /* the run's training time ("train_runtime", HF Trainer's summary): an end record */
  int samples;        /* iter/iters count samples ("[n/N (p%)]"), not iterations */
  int ambiguous_time; /* a bare "time"/"took" whose meaning the line does not settle */
  double time;        /* its value (seconds) */
  int ckpt;           /* "... snapshot saved at PATH": a checkpoint */
  int resume;         /* "Resuming ... at Epoch e": context only */
  const char *path;   /* ckpt path in the line, not NUL-terminated */
  size_t path_len;
  int nkeys, nnums;   /* keys recognised (metrics too), numbers read */
};
void pit_kv_clear(struct pit_kv *kv);

struct pit_pattern; /* parse_pattern.c */

struct pit_parser {
  enum pit_parse_format fmt;
  char run[PIT_NAME_MAX];
  int force_run;
  char *file;
  pit_parse_emit_fn emit;
  pit_parse_warn_fn warn;
  void *ctx;
  struct pit_parse_stats st;
  char reason[256];

  struct pit_record slot[2]; /* cur and pend point into it; holding cur swaps them (no copy) */
  struct pit_record blank; /* pit_pl_new's starting point: initialised, run set, owns nothing */
  struct pit_record *cur;  /* the record being built */
  struct pit_record *pend; /* the record held for merging */
  struct pit_record json;  /* records read from JSON lines (own their arrays/strings) */
  unsigned char json_next_key[32]; /* parse_json.c: key id + 1 that followed each key last time, 0 unknown */
  int partial;             /* the line being parsed is a last line without '\n' */
  /* segments of a line (glued lines, tqdm's '\r' updates): set per segment */
  const char *tail;        /* a family read its record up to here (NULL: not said) */
  const char *next;        /* the next segment of this line starts here (NULL: none) */
  int next_glued;          /* next starts another line's text glued to this one */
  const char *reader;      /* the reader that took the segment ("dcgan", "kv", ...) */
  int seg_rank;            /* rank a tag before the text names ([GPU1], [default1]:, [0,1]<stdout>:), -1 */
  char kv_path[2][512];    /* parse_kv.c: a checkpoint's path, one per slot (not owned by the record) */
  int64_t kv_epoch_start;  /* parse_kv.c: the segment says this epoch begins; -1 not */
  int kv_epoch_base;       /* parse_kv.c: lone "Epoch e/N" lines count from 1 (Keras) or 0; -1 not known */
  int64_t kv_gbatch;       /* parse_kv.c: the global batch the log said last, -1 none */
  double kv_clock0;        /* parse_kv.c: the first timestamp of the stream (records' t counts from it), NaN */
  char info[160];          /* what a context segment taught (explain only) */
  pit_parse_explain_fn explain;
  void *explain_ctx;
  struct pit_pattern *pattern; /* --pattern, tried before every other reader; NULL none */
  int have_times;          /* an iteration with its time was emitted: progress-only lines add nothing */
  int progress_samples;    /* progress counted in samples ("[n/N (p%)]" with no batch size known) */
  int nul_counted;         /* the caller counts lines with NUL bytes (pit_parse_file does, per block) */
  int have_pend;
  unsigned pend_kinds;     /* bit per enum pit_pl_kind merged into pend */
  int pend_digits;         /* significant digits of pend's main time */
  int cur_digits;

  struct pit_pl_rank *ranks; /* index rank+1 (0: all ranks) */
  int nranks;

  /* DCGAN context */
  int64_t batch_per_rank;  /* Namespace(batch_size=B, else the caller's (pit_parser_set_batch) */
  int64_t batch_given;     /* the caller's batch per rank, -1 none */
  int batch_logged;        /* the log gave batch_per_rank itself */
  int world;               /* Rank: r. World Size: W */
  int rpn_given;           /* the caller's ranks per node, -1 none */
  int64_t per_epoch;       /* L of the last "iteration: i/L" of any rank, -1 unknown */
  int64_t epochs;          /* N of the last "[epoch: e/N]" (the job's epochs), -1 unknown */
  char itype[PIT_NAME_MAX]; /* instance type given by the caller ("" unknown) */
  char init_config[320];   /* the config an init record is emitted with (pit_pl_flush) */
  /* SageMaker context */
  int64_t sm_epoch;
  int have_rt;
  double rt_first, rt_last;
  /* CSV context */
  int csv_cols;            /* columns of the header, 0 before one */
  long csv_row;
};

/* out := the n bytes at b, cut to cap-1 and PIT_NAME_MAX-1 bytes (a run id). */
static inline void pl_copy_name(char *out, size_t cap, const char *b, size_t n) {
  if (n >= cap)
    n = cap - 1;
  if (n >= PIT_NAME_MAX)
    n = PIT_NAME_MAX - 1;
  memcpy(out, b, n);
  out[n] = 0;
}

/* ---- cursor matching ---- */

static inline int pl_lit(const char **p, const char *end, const char *s, size_t n) {
  if ((size_t)(end - *p) < n)
    return 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (n < 8 && end - *p >= 8) {
    /* n and s are constants where this is inlined: b folds to a constant, a is
     * one 8-byte load, masked (copying n bytes of the line into a word went
     * through the stack, and the wide reload stalled on the narrow stores) */
    uint64_t a, b = 0;
    memcpy(&b, s, n);
    memcpy(&a, *p, 8);
    if ((a & (n ? ~0ULL >> (64 - 8 * n) : 0)) != b)
      return 0;
    *p += n;
    return 1;
  }
#endif
  if (n <= 8) { /* n is a constant where this is inlined: plain loads, no memcmp call */
    uint64_t a = 0, b = 0;
    memcpy(&a, *p, n);
    memcpy(&b, s, n);
    if (a != b)
      return 0;
  } else if (n <= 16) {
    uint64_t a, b, c, d;
    memcpy(&a, *p, 8);
    memcpy(&b, s, 8);
    memcpy(&c, *p + n - 8, 8);
    memcpy(&d, s + n - 8, 8);
    if (a != b || c != d)
      return 0;
  } else if (memcmp(*p, s, n) != 0) {
    return 0;
  }
  *p += n;
  return 1;
}
#define PL_LIT(p, end, s) pl_lit(p, end, s, sizeof(s) - 1)

static inline void pl_ws(const char **p, const char *end) {
  while (*p < end && (**p == ' ' || **p == '\t'))
    (*p)++;
}

static inline int pl_isdigit(char c) { return c >= '0' && c <= '9'; }

/* An instance type's name: letters, digits and "._-" only. */
static inline int pl_name_ok(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || pl_isdigit(c) || c == '.' || c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

/* Non-negative integer of at most 15 digits. */
static inline int pl_i64(const char **p, const char *end, int64_t *out) {
  const char *s = *p;
  int64_t v = 0;
  int n = 0;
  while (s < end && pl_isdigit(*s)) {
    if (++n > 15)
      return 0;
    v = v * 10 + (*s++ - '0');
  }
  if (n == 0)
    return 0;
  *p = s;
  *out = v;
  return 1;
}

/* First occurrence of needle (n bytes) in [s, end), or NULL. */
static inline const char *pl_find(const char *s, const char *end, const char *needle, size_t n) {
  while ((size_t)(end - s) >= n) {
    const char *q = memchr(s, needle[0], (size_t)(end - s) - n + 1);
    if (!q)
      return NULL;
    if (memcmp(q, needle, n) == 0)
      return q;
    s = q + 1;
  }
  return NULL;
}
#define PL_FIND(s, end, lit) pl_find(s, end, lit, sizeof(lit) - 1)

/* A decimal number ([+-]d[.d][e[+-]d]), finite; *ndig = significant digits written. */
int pit_pl_f64(const char **p, const char *end, double *out, int *ndig);
/* Same, also requiring v >= 0 (durations, times). */
static inline int pl_time(const char **p, const char *end, double *out, int *ndig) {
  return pit_pl_f64(p, end, out, ndig) && *out >= 0;
}

/* Inside a family function with p, s, end in scope: a value that must follow. */
#define PL_NEED_INT(var, what)            \
  do {                                    \
    if (!pl_i64(&s, end, &(var)))         \
      return pit_pl_bad(p, what, s, end); \
  } while (0)
#define PL_NEED_TIME(var, dig, what)      \
  do {                                    \
    if (!pl_time(&s, end, &(var), &(dig))) \
      return pit_pl_bad(p, what, s, end); \
  } while (0)
#define PL_NEED_LIT(str, what)            \
  do {                                    \
    if (!PL_LIT(&s, end, str))            \
      return pit_pl_bad(p, what, s, end); \
  } while (0)

/* Sets p->reason ("bad <what>: '<text>'", text cut at 24 bytes) and returns PL_BAD. */
int pit_pl_bad(struct pit_parser *p, const char *what, const char *at, const char *end);

/* Fresh p->cur of type t for rank (-1: all ranks), run set, gen 0. */
void pit_pl_new(struct pit_parser *p, enum pit_rec_type t, int rank);
/* Rank state (created on first use); NULL when rank is out of range (> 1e6). */
struct pit_pl_rank *pit_pl_rank(struct pit_parser *p, int rank);
/* Folds p->cur into the held record if it repeats it (same iteration/epoch and
 * rank, a kind not merged yet), else emits the held record and holds p->cur.
 * digits: significant digits of p->cur's main time. Returns PL_RECORD,
 * PL_MERGED, or a negative emit error. */
int pit_pl_put(struct pit_parser *p, enum pit_pl_kind kind, int digits, struct pit_err *e);
/* Emits the held record (if any) now. */
int pit_pl_flush(struct pit_parser *p, struct pit_err *e);
/* Emits r directly (after the held record), counting it. */
int pit_pl_emit(struct pit_parser *p, struct pit_record *r, struct pit_err *e);
/* Emits the init record r, with the job context as its config when it has none. */
int pit_pl_emit_init(struct pit_parser *p, struct pit_record *r, struct pit_err *e);

/* Families: each returns a PL_* verdict or a negative error. */
/* marked: the line carried the PITSTOP marker (then any failure is malformed;
 * a bare {...} line that fails and names no "type" is unknown). */
int pit_pl_json(struct pit_parser *p, const char *s, const char *end, int marked, struct pit_err *e);
int pit_pl_dcgan(struct pit_parser *p, const char *s, const char *end, struct pit_err *e);
int pit_pl_sagemaker(struct pit_parser *p, const char *s, const char *end, struct pit_err *e);
int pit_pl_csv(struct pit_parser *p, const char *s, const char *end, struct pit_err *e);
int pit_pl_pi(struct pit_parser *p, const char *s, const char *end, struct pit_err *e);
/* The key/value reader (parse_kv.c): the fallback for lines no family claims.
 * May set p->next (a glued second record, found by a repeated key). */
int pit_pl_kv(struct pit_parser *p, const char *s, const char *end, struct pit_err *e);
/* What kv says, as records (the key/value reader's and --pattern's common end). */
int pit_pl_kv_put(struct pit_parser *p, const struct pit_kv *kv, struct pit_err *e);
/* --pattern (parse_pattern.c): PL_UNKNOWN when the line does not match. */
int pit_pl_pattern(struct pit_parser *p, const char *s, const char *end, struct pit_err *e);
void pit_pattern_free(struct pit_pattern *t);
/* Where a line of a named family starts in [s, end) ("[epoch: ", "Rank: ",
 * "PITSTOP {", ...), or NULL: how glued lines are split. after_word: "Rank: "
 * may follow a letter (the unit of the record before: "12.5 sRank: 1, ..."). */
const char *pit_pl_find_opener(const char *s, const char *end, int after_word);
/* YAML timing files (parse_yaml.c), read whole, not line by line. */
/* Whether buf (a file's start) looks like one: its first line past blanks,
 * comments and a "---" header is "key:" or "- key:" with nothing after. */
int pit_pl_yaml_claims(const char *buf, size_t len);

#endif

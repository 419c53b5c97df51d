/* cmd_parse.c — `pitstop parse FILE...`: training logs to records (docs/parse.md),
 * as JSON Lines on stdout, into a file (--out, written atomically) or into the
 * store (--db, one run per input file, one transaction).
 *
 * Invariants: a per-file summary and every malformed line ("file:line: reason")
 * go to stderr; a file that is missing, unreadable or holds nothing usable makes
 * the exit status 1, and then --out and --db write nothing at all.
 */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "record/slim.h"
#include "pitstop/parse.h"
#include "pitstop/report.h"
#include "pitstop/store.h"

#define OUT_CAP (1u << 20)
#define MAX_WARN 20

struct sink {
  FILE *fp;                 /* stdout or the atomic file; NULL with --db */
  const char *fname;        /* for messages */
  char *buf;
  size_t len;
  struct pit_store *db;
  long warned;              /* malformed lines shown for the current file */
  int quiet;
  int broken;               /* writing a record failed: the output cannot be trusted */
  struct writer *w;         /* JSON output thread (NULL with --db) */
  char runs[8][PIT_NAME_MAX]; /* --db: the runs the current file added to (the first 8) */
  int nruns;
};

static const struct pit_cli_opt opts[] = {
    {"format", 1, 'f', "F", "auto (default: decided per line; a YAML timing file by its start),\n"
                            "jsonl, sagemaker, csv, dcgan, pi, yaml"},
    {"run", 1, 'r', "ID", "run id of every record (default: the file's name without extension);\n"
                          "the per-rank files of one job given with one --run make one run"},
    {"job-per-dir", 0, 'j', NULL, "the files of one directory are the ranks of one job: run id = directory name"},
    {"itype", 1, 'i', "T", "instance type of the job (default: a path component naming a type of\n"
                           "the catalog: .../m4.xlarge/rank0.out, result-p2-8-256-e0.txt)"},
    {"catalog", 1, 'c', "FILE", "instance types for that (default aws.tsv of the catalogs beside the program\n"
                                "or of its source tree: docs/catalog.md)"},
    {"batch-size", 1, 'b', "N", "the batch size per rank the job used, for logs that do not record it\n"
                                "(stored as given; without it such runs have no batch)"},
    {"ranks-per-node", 1, 'n', "N", "ranks the job ran on each node (no log says): the run is priced on\n"
                                    "ceil(ranks / N) nodes (default: its ranks on one node)"},
    {"out", 1, 'o', "FILE", "write JSON Lines to FILE (atomically) instead of stdout"},
    {"db", 1, 'd', "PATH", "store the records in the SQLite store at PATH, a run per file"},
    {"quiet", 0, 'q', NULL, "no per-file summary on stderr (malformed lines are still reported)"},
    {"pattern", 1, 'p', "TEMPLATE", "read lines of this shape first: literal text and {rank} {epoch} {epochs}\n"
                                    "{iter} {iters} {step} {step_s} {step_ms} {epoch_s} {batch} {loss} {elapsed} {*}"},
    {"explain", 0, 'x', NULL, "print, per line, whether it was used, by which reader, as what, and why\n"
                              "not; then a summary (records go only to --out/--db then)"},
};

static const struct pit_cli_cmd cmd = {
    "usage: pitstop parse [--format F] [--run ID | --job-per-dir] [--itype T | --catalog FILE]\n"
    "                     [--batch-size N] [--ranks-per-node N] [--out FILE | --db PATH] [--quiet]\n"
    "                     [--pattern TEMPLATE] [--explain] FILE...\n"
    "\n"
    "Reads training logs (\"-\" = stdin) and writes one record per iteration, epoch,\n"
    "validation, init and end they report (docs/parse.md lists every line kind).\n"
    "\n",
    opts, PIT_CLI_NOPTS(opts), NULL};

static int drain(struct sink *s, struct pit_err *e) {
  if (s->len && fwrite(s->buf, 1, s->len, s->fp) != s->len)
    return pit_err_errno(e, PIT_EIO, "cannot write '%s'", s->fname);
  s->len = 0;
  return 0;
}

static int emit_one(struct sink *s, const struct pit_record *r, struct pit_err *e) {
  if (s->db) {
    int k = 0;
    while (k < s->nruns && strcmp(s->runs[k], r->run) != 0)
      k++;
    if (k == s->nruns && k < (int)(sizeof s->runs / sizeof s->runs[0]))
      memcpy(s->runs[s->nruns++], r->run, PIT_NAME_MAX);
    return pit_store_add(s->db, r, e);
  }
  size_t need = pit_parse_json_bound(r);
  if (s->len + need > OUT_CAP) {
    int rc = drain(s, e);
    if (rc)
      return rc;
  }
  if (need > OUT_CAP) { /* a record bigger than the buffer (huge config) */
    char *tmp = malloc(need);
    if (!tmp)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    size_t n = pit_parse_json(r, tmp);
    size_t w = fwrite(tmp, 1, n, s->fp);
    free(tmp);
    return w == n ? 0 : pit_err_errno(e, PIT_EIO, "cannot write '%s'", s->fname);
  }
  s->len += pit_parse_json(r, s->buf + s->len);
  return 0;
}

/* ---- JSON output on a second thread: the parser hands records over in
 * batches; the writer formats and writes them in order. ---- */

#define BATCH_RECS 1024
/* The ring is deep enough for the stretches of a log where formatting is slower
 * than parsing (with 4 batches the parser waited for the writer ~5% of the
 * time), and a sleeping writer is woken only once WAKE_AT batches are full: a
 * wake-up costs the parser a system call and the writer a reschedule, and
 * waking it per batch did that ~700 times on a 200 MB log. */
#define NBATCH 16
#define WAKE_AT 8

#define INLINE_RANKS 8

/* How slot i of a batch holds its record: slim (sl[i]), a copy in r[i] whose
 * per-rank arrays are in arr[i], or a deep copy in r[i] owning its arrays and
 * strings (released after writing). */
enum { SLOT_SLIM, SLOT_COPY, SLOT_DEEP };

struct batch {
  _Alignas(64) struct pit_slim sl[BATCH_RECS]; /* two cache lines each (the ring is 64-byte aligned) */
  struct pit_record r[BATCH_RECS]; /* touched only for records that are not slim */
  unsigned char kind[BATCH_RECS];
  double arr[BATCH_RECS][2 * INLINE_RANKS]; /* compute_s/wait_s of small records, no malloc */
  char run[PIT_NAME_MAX];   /* the run of the slim records */
  int has_run;
  int n;
};

/* Whether r can travel slim in b (and then b's run is r's). */
static int slim_fits(const struct pit_record *r, const struct batch *b) {
  return pit_slim_fits(r) && (!b->has_run || strcmp(b->run, r->run) == 0);
}

struct writer {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct batch *b;          /* NBATCH batches, in mem aligned to 64 bytes */
  void *mem;
  int filled[NBATCH];       /* handed to the writer, not yet written */
  int nfilled;              /* how many are */
  int writer_waits;         /* the writer sleeps until WAKE_AT are full (or done) */
  int parser_waits;         /* the parser sleeps until its next batch is free */
  int prod, cons, done, failed;
  struct pit_err e;
  struct sink *s;
  struct sink out;          /* the writer thread's copy (see writer_main) */
};

static int owns(const struct pit_record *r) {
  return r->compute_s || r->wait_s || r->config || r->path || r->detail;
}

static void *writer_main(void *arg) {
  struct writer *w = arg;
  /* The output buffer's fill level lives in this thread's own copy of the sink:
   * updated per record, it shared a cache line with what the parser thread reads
   * per record (s->w), and the line bounced between the cores (perf: 64% of
   * emit()'s samples on that one load). The parser thread does not touch the
   * buffer until the join, after which the level is handed back. */
  struct sink out = w->out;
  struct pit_record rec; /* slim records are rebuilt here: what they do not carry stays absent */
  pit_record_init(&rec);
  for (;;) {
    pthread_mutex_lock(&w->mu);
    if (!w->filled[w->cons]) {
      w->writer_waits = 1;
      while (w->nfilled < WAKE_AT && !w->done)
        pthread_cond_wait(&w->cv, &w->mu);
      w->writer_waits = 0;
    }
    if (!w->filled[w->cons]) {
      pthread_mutex_unlock(&w->mu);
      w->s->len = out.len;
      return NULL;
    }
    int failed = w->failed;
    pthread_mutex_unlock(&w->mu);
    struct batch *b = &w->b[w->cons];
    struct pit_err e = {0};
    int rc = 0;
    for (int i = 0; i < b->n; i++) {
      if (b->kind[i] == SLOT_SLIM)
        pit_slim_get(&rec, &b->sl[i], b->run);
      if (!failed && !rc)
        rc = emit_one(&out, b->kind[i] == SLOT_SLIM ? &rec : &b->r[i], &e);
      if (b->kind[i] == SLOT_DEEP)
        pit_record_release(&b->r[i]);
    }
    b->n = 0;
    b->has_run = 0;
    pthread_mutex_lock(&w->mu);
    if (rc && !w->failed) {
      w->failed = 1;
      w->e = e;
    }
    w->filled[w->cons] = 0;
    w->nfilled--;
    w->cons = (w->cons + 1) % NBATCH;
    if (w->parser_waits)
      pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
}

/* Hands the producer's batch to the writer and waits for the next one to be free. */
static int writer_push(struct writer *w, struct pit_err *e) {
  pthread_mutex_lock(&w->mu);
  w->filled[w->prod] = 1;
  w->nfilled++;
  w->prod = (w->prod + 1) % NBATCH;
  if (w->writer_waits && w->nfilled >= WAKE_AT)
    pthread_cond_broadcast(&w->cv);
  w->parser_waits = 1;
  while (w->filled[w->prod] && !w->failed)
    pthread_cond_wait(&w->cv, &w->mu);
  w->parser_waits = 0;
  int failed = w->failed;
  if (failed && e)
    *e = w->e;
  pthread_mutex_unlock(&w->mu);
  return failed ? PIT_EIO : 0;
}

static int writer_start(struct writer *w, struct sink *s, struct pit_err *e) {
  memset(w, 0, sizeof *w);
  w->s = s;
  w->out = *s; /* copied before the thread starts */
  w->mem = calloc(1, NBATCH * sizeof *w->b + 64); /* calloc: pages zeroed when first touched */
  w->b = w->mem ? (struct batch *)(((uintptr_t)w->mem + 63) & ~(uintptr_t)63) : NULL;
  if (!w->b)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  if (pthread_create(&w->th, NULL, writer_main, w) != 0) {
    free(w->mem);
    w->b = NULL;
    return pit_err_set(e, PIT_ELIB, "cannot start the output thread");
  }
  return 0;
}

/* Writes what is left and stops the thread; returns the first write error. */
static int writer_finish(struct writer *w, struct pit_err *e) {
  if (!w->b)
    return 0;
  /* after a failed push, b[prod] may still be the writer's: read nothing of it */
  pthread_mutex_lock(&w->mu);
  int failed = w->failed;
  pthread_mutex_unlock(&w->mu);
  int rc = !failed && w->b[w->prod].n ? writer_push(w, e) : 0;
  pthread_mutex_lock(&w->mu);
  w->done = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  if (!rc && w->failed) {
    *e = w->e;
    rc = PIT_EIO;
  }
  for (int k = 0; k < NBATCH; k++) /* batches never handed over after a failure */
    for (int i = 0; i < w->b[k].n; i++)
      if (w->b[k].kind[i] == SLOT_DEEP)
        pit_record_release(&w->b[k].r[i]);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  free(w->mem);
  w->b = NULL;
  return rc;
}

static int emit(void *ctx, const struct pit_record *r, struct pit_err *e) {
  struct sink *s = ctx;
  int rc;
  if (s->w) {
    struct batch *b = &s->w->b[s->w->prod];
    int i = b->n;
    if (slim_fits(r, b)) {
      if (!b->has_run) {
        memcpy(b->run, r->run, sizeof b->run);
        b->has_run = 1;
      }
      pit_slim_put(&b->sl[i], r);
      b->kind[i] = SLOT_SLIM;
    } else if (!owns(r)) {
      b->r[i] = *r;
      b->kind[i] = SLOT_COPY;
    } else if (!r->config && !r->path && !r->detail && r->nranks <= INLINE_RANKS) {
      b->r[i] = *r; /* per-rank arrays copied into the batch */
      b->r[i].compute_s = r->compute_s ? memcpy(b->arr[i], r->compute_s, sizeof(double) * (size_t)r->nranks) : NULL;
      b->r[i].wait_s =
          r->wait_s ? memcpy(b->arr[i] + INLINE_RANKS, r->wait_s, sizeof(double) * (size_t)r->nranks) : NULL;
      b->kind[i] = SLOT_COPY;
    } else if (pit_record_copy(&b->r[i], r)) {
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    } else {
      b->kind[i] = SLOT_DEEP;
    }
    rc = ++b->n == BATCH_RECS ? writer_push(s->w, e) : 0;
  } else {
    rc = emit_one(s, r, e);
  }
  if (rc)
    s->broken = 1;
  return rc;
}

static void warn(void *ctx, const struct pit_err *w) {
  struct sink *s = ctx;
  if (w->code != PIT_EFORMAT || ++s->warned <= MAX_WARN) /* else a malformed line; timing lines: 3 at most */
    pit_cli_note("%s", w->msg);
}

/* ", N unrecognised timing lines" for the summary, or "". */
static const char *unrec_note(const struct pit_parse_stats *st, char *buf, size_t n) {
  if (st->unrecognised == 0)
    return "";
  snprintf(buf, n, ", %ld unrecognised timing line%s", st->unrecognised, st->unrecognised > 1 ? "s" : "");
  return buf;
}

/* The instance types of a catalog (names point into cat). With no --catalog a
 * missing default catalog is no error: types then come only from --itype. */
static int catalog_names(const char *path, struct pit_catalog *cat, const char ***names, struct pit_err *e) {
  const char *p = path;
  struct pit_err none = {0};
  if (!p && !(p = pit_cli_catalog("aws.tsv", &none)))
    return 0;
  if (pit_catalog_load(cat, p, e))
    return -1;
  if (!(*names = calloc((size_t)cat->n + 1, sizeof **names)))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int i = 0; i < cat->n; i++)
    (*names)[i] = cat->types[i].name;
  return cat->n;
}

/* Why a file gave nothing usable, as one message. */
static void nothing_usable(const char *path, const struct pit_parse_stats *st, struct pit_err *e) {
  if (st->lines == 0)
    pit_err_set(e, PIT_EFORMAT, "'%s' is empty: nothing to parse", path);
  else if (st->nul_lines * 4 >= st->lines)
    pit_err_set(e, PIT_EFORMAT, "'%s' looks like a binary file (%ld of %ld lines hold NUL bytes): no records",
                path, st->nul_lines, st->lines);
  else if (st->malformed > 0)
    pit_err_set(e, PIT_EFORMAT, "'%s': no records: %ld malformed lines, %ld skipped", path,
                st->malformed, st->skipped);
  else
    pit_err_set(e, PIT_EFORMAT, "'%s': no training-log lines found (%ld lines skipped)", path,
                st->skipped);
  pit_err_hint(e, "docs/parse.md lists the formats pitstop parse reads; --format forces one");
}

/* --db: every file's run must be new, in the store and among the files (with
 * --run all files make one run). Checked before anything is added: reading the
 * run list commits the store's open transaction. */
static int runs_are_new(struct pit_store *db, char **ids, int n, int one_run, struct pit_err *e) {
  struct pit_store_run *runs = NULL;
  int nr = 0;
  int rc = pit_store_runs(db, &runs, &nr, e);
  if (rc)
    return rc;
  const char *taken = NULL;
  for (int i = 0; i < n && !taken; i++) {
    size_t l = strlen(ids[i]);
    for (int k = 0; k < nr && !taken; k++)
      if (strcmp(runs[k].name, ids[i]) == 0 ||
          (strncmp(runs[k].name, ids[i], l) == 0 && runs[k].name[l] == '.')) /* CSV rows: run.k */
        taken = ids[i];
    for (int k = 0; k < i && !taken && !one_run; k++)
      if (strcmp(ids[k], ids[i]) == 0)
        taken = ids[i];
  }
  if (taken) {
    pit_err_set(e, PIT_EARG, "run '%s' is already in the store%s", taken,
                one_run ? "" : " or given by two files");
    pit_err_hint(e, "give another id with --run ID");
    rc = PIT_EARG;
  }
  pit_store_runs_free(runs, nr);
  return rc;
}

/* ---- --explain: one line per part of a line, then a summary per file ---- */

#define XS_MAX 16
struct xstate {
  const char *path;
  char name[XS_MAX][96]; /* readers, as met */
  long count[XS_MAX];
  int n;
  char why[XS_MAX][96];
  long wcount[XS_MAX];
  int nw;
  long lines, used, context, skipped, malformed, cut, split;
};

static void xs_count(char (*names)[96], long *counts, int *n, const char *what, size_t cap) {
  for (int i = 0; i < *n; i++)
    if (strncmp(names[i], what, cap - 1) == 0) {
      counts[i]++;
      return;
    }
  if (*n < XS_MAX) {
    snprintf(names[*n], cap, "%s", what);
    counts[(*n)++] = 1;
  }
}

static void show_text(const char *t, size_t n) {
  fputc('\'', stdout);
  for (size_t i = 0; i < n && i < 72; i++)
    fputc((t[i] >= 0x20 && t[i] < 0x7f) ? t[i] : '?', stdout);
  fputs(n > 72 ? "...'" : "'", stdout);
}

static void show_record(const struct pit_record *r) {
  printf("%s", pit_rec_type_name(r->type));
  if (r->rank >= 0)
    printf(" rank %d", r->rank);
  if (r->epoch >= 0)
    printf(" epoch %lld", (long long)r->epoch);
  if (r->iter >= 0)
    printf(" iter %lld", (long long)r->iter);
  if (r->step >= 0)
    printf(" step %lld", (long long)r->step);
  if (r->batch >= 0)
    printf(" batch %lld", (long long)r->batch);
  if (!isnan(r->step_s))
    printf(" step_s %.9g", r->step_s);
  else if (r->type == PIT_REC_ITER)
    printf(" (progress, no time)");
  if (!isnan(r->epoch_s))
    printf(" epoch_s %.9g", r->epoch_s);
  else if (r->type == PIT_REC_EPOCH)
    printf(" (epoch ended, no time)");
  if (!isnan(r->val_s))
    printf(" val_s %.9g", r->val_s);
  if (!isnan(r->init_s))
    printf(" init_s %.9g", r->init_s);
  if (!isnan(r->total_s))
    printf(" total_s %.9g", r->total_s);
  if (!isnan(r->t))
    printf(" t %.9g", r->t);
  if (!isnan(r->loss))
    printf(" loss %.9g", r->loss);
  for (int i = 0; i < r->nlosses; i++)
    printf(" loss_%s %.9g", r->loss_name[i], r->loss_val[i]);
  if (r->path)
    printf(" path %s", r->path);
}

static void explain_part(void *ctx, const struct pit_parse_part *x) {
  struct xstate *xs = ctx;
  if (x->part == 0)
    xs->lines++;
  else
    xs->split++;
  printf("%s:%ld%s  %-9s ", xs->path, x->line, x->part ? "+" : "", x->reader ? x->reader : "-");
  switch (x->use) {
  case PIT_USE_RECORD:
  case PIT_USE_MERGED:
    xs->used++;
    xs_count(xs->name, xs->count, &xs->n, x->reader ? x->reader : "?", sizeof xs->name[0]);
    printf("%s ", x->use == PIT_USE_RECORD ? "record " : "merged ");
    if (x->rec)
      show_record(x->rec);
    else
      printf("(several records)");
    break;
  case PIT_USE_CONTEXT:
    xs->context++;
    xs_count(xs->name, xs->count, &xs->n, x->reader ? x->reader : "?", sizeof xs->name[0]);
    printf("context %s", x->info[0] ? x->info : "(job context)");
    break;
  case PIT_USE_SKIPPED:
    xs->skipped++;
    xs_count(xs->why, xs->wcount, &xs->nw, x->why, sizeof xs->why[0]);
    printf("skipped %s: ", x->why);
    show_text(x->text, x->len);
    break;
  case PIT_USE_MALFORMED:
    xs->malformed++;
    printf("MALFORMED %s: ", x->why);
    show_text(x->text, x->len);
    break;
  case PIT_USE_CUT:
    xs->cut++;
    printf("CUT %s: ", x->why);
    show_text(x->text, x->len);
    break;
  }
  fputc('\n', stdout);
}

static void explain_summary(const struct xstate *xs) {
  printf("%s: %ld lines", xs->path, xs->lines);
  if (xs->split)
    printf(" (+%ld parts split off glued lines)", xs->split);
  printf("; used:");
  if (xs->n == 0)
    printf(" none");
  for (int i = 0; i < xs->n; i++)
    printf("%s %s %ld", i ? "," : "", xs->name[i], xs->count[i]);
  printf(" (%ld records or merged, %ld context); skipped %ld", xs->used, xs->context, xs->skipped);
  for (int i = 0; i < xs->nw; i++)
    printf("%s%s %ld", i ? ", " : " (", xs->why[i], xs->wcount[i]);
  printf("%s; malformed %ld; cut %ld\n", xs->nw ? ")" : "", xs->malformed, xs->cut);
}

/* pitstop parse's options, as given and parsed */
struct parse_args {
  enum pit_parse_format fmt;
  const char *run, *out, *dbpath, *itype, *catalog, *pattern;
  int quiet, per_dir, explain;
  int64_t batch, rpn;
};

/* The options into a; 0 or the exit status (-1: --help printed). */
static int parse_args(int argc, char **argv, struct parse_args *a) {
  int c;
  struct pit_cli_getopt go;
  pit_cli_getopt_init(&go, argc, argv, &cmd);
  while ((c = pit_cli_getopt_next(&go)) != -1) {
    switch (c) {
    case 'f':
      if (pit_parse_format_from_name(optarg, &a->fmt))
        return pit_cli_usage("parse: unknown --format '%s' (auto, jsonl, sagemaker, csv, dcgan, pi, yaml)", optarg);
      break;
    case 'r':
      if (!*optarg || strlen(optarg) >= PIT_NAME_MAX)
        return pit_cli_usage("parse: --run needs an id of 1 to %d bytes", PIT_NAME_MAX - 1);
      a->run = optarg;
      break;
    case 'o': a->out = optarg; break;
    case 'd': a->dbpath = optarg; break;
    case 'q': a->quiet = 1; break;
    case 'p': a->pattern = optarg; break;
    case 'x': a->explain = 1; break;
    case 'j': a->per_dir = 1; break;
    case 'i': a->itype = optarg; break;
    case 'c': a->catalog = optarg; break;
    case 'b':
      if (pit_parse_i64(optarg, &a->batch) < 0 || a->batch <= 0 || a->batch > (int64_t)1e12)
        return pit_cli_usage("parse: --batch-size '%s' is not a positive count of samples per rank", optarg);
      break;
    case 'n':
      if (pit_parse_i64(optarg, &a->rpn) < 0 || a->rpn <= 0 || a->rpn > 1000000)
        return pit_cli_usage("parse: --ranks-per-node '%s' is not a positive count of ranks", optarg);
      break;
    case 'h':
      pit_cli_help(stdout, &cmd);
      return -1;
    default:
      pit_cli_help(stderr, &cmd);
      return pit_cli_usage("parse: bad option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) {
    pit_cli_help(stderr, &cmd);
    return pit_cli_usage("parse: no input file");
  }
  if (a->out && a->dbpath)
    return pit_cli_usage("parse: give --out or --db, not both");
  if (a->run && a->per_dir)
    return pit_cli_usage("parse: give --run or --job-per-dir, not both");
  if (a->itype && a->catalog)
    return pit_cli_usage("parse: give --itype or --catalog, not both");
  if (a->pattern) { /* a bad template is a usage error, before any file is read */
    struct pit_parser *tp = NULL;
    struct pit_err pe = {0};
    int prc = pit_parser_new(&tp, a->fmt, "x", 0, "-", NULL, NULL, NULL, &pe);
    if (!prc)
      prc = pit_parser_set_pattern(tp, a->pattern, &pe);
    pit_parser_free(tp);
    if (prc)
      return pit_cli_usage("parse: %s", pe.msg);
  }
  return 0;
}

/* Where the records go into s: the store (--db, one transaction), --out (atomic, af),
 * /dev/null (--explain alone: the explanation is the output) or stdout; the writer thread wr. */
static int open_sink(const struct parse_args *a, struct sink *s, struct pit_atomic_file *af, struct writer *wr) {
  struct pit_err e = {0};
  if (a->dbpath) {
    s->fp = NULL;
    if (pit_store_open(&s->db, a->dbpath, &e))
      return pit_cli_fail(&e);
    pit_store_set_batch(s->db, 0); /* all or nothing */
    return 0;
  }
  if (!(s->buf = malloc(OUT_CAP))) {
    pit_err_set(&e, PIT_ENOMEM, "out of memory");
    return pit_cli_fail(&e);
  }
  if (a->explain && !a->out) {
    if (!(s->fp = fopen("/dev/null", "w"))) {
      free(s->buf);
      pit_err_errno(&e, PIT_EIO, "cannot open /dev/null");
      return pit_cli_fail(&e);
    }
    s->fname = "/dev/null";
  }
  if (a->out) {
    if (pit_atomic_open(af, a->out, &e)) {
      free(s->buf);
      return pit_cli_fail(&e);
    }
    s->fp = af->fp;
    s->fname = a->out;
  }
  if (writer_start(wr, s, &e) == 0) /* else: format on this thread */
    s->w = wr;
  return 0;
}

/* The sink closed: the store committed (or aborted when failed), the output drained
 * and --out committed (or left unwritten); returns the exit status. */
static int close_sink(const struct parse_args *a, struct sink *s, struct pit_atomic_file *af, int failed,
                      int fatal) {
  struct pit_err e = {0};
  int rc = 0;
  if (s->db) {
    if (failed) {
      pit_store_abort(s->db);
      pit_cli_note("nothing stored in '%s'", a->dbpath);
    } else if (pit_store_close(s->db, &e)) {
      rc = pit_cli_fail(&e);
    }
    return failed || rc ? 1 : 0;
  }
  if (s->w && writer_finish(s->w, &e) && !fatal) {
    rc = pit_cli_fail(&e);
    fatal = 1;
  }
  if (!fatal && drain(s, &e))
    rc = pit_cli_fail(&e);
  if (a->out) {
    if (failed || rc) {
      pit_atomic_abort(af);
      pit_cli_note("'%s' not written", a->out);
    } else if (pit_atomic_commit(af, &e)) {
      rc = pit_cli_fail(&e);
    }
  } else if (a->explain && s->fp && s->fp != stdout) {
    fclose(s->fp);
    if (fflush(stdout) != 0) {
      pit_err_errno(&e, PIT_EIO, "cannot write to stdout");
      rc = pit_cli_fail(&e);
    }
  } else if (fflush(stdout) != 0) {
    pit_err_errno(&e, PIT_EIO, "cannot write to stdout");
    rc = pit_cli_fail(&e);
  }
  free(s->buf);
  return failed || rc ? 1 : 0;
}

/* The run id of each of the n files into ids (idp: pointers to them): --run, the directory's or the file's name. */
static void run_ids(const struct parse_args *a, char *const *files, int n, char (*ids)[PIT_NAME_MAX], char **idp) {
  for (int i = 0; i < n; i++) {
    if (a->run)
      snprintf(ids[i], PIT_NAME_MAX, "%s", a->run);
    else if (a->per_dir)
      pit_parse_dir_run_name(files[i], ids[i], PIT_NAME_MAX);
    else
      pit_parse_run_name(files[i], ids[i], PIT_NAME_MAX);
    idp[i] = ids[i];
  }
}

/* One file read into s as run runid (its type from its path among tnames[0..ntypes-1]
 * unless --itype); *failed on a bad input, *fatal when the output cannot be trusted. */
static void parse_one(const struct parse_args *a, struct sink *s, const char *path, const char *runid,
                      const char **tnames, int ntypes, int *failed, int *fatal) {
  struct pit_err e = {0};
  struct xstate xs;
  if (s->db) {
    char src[PIT_NAME_MAX + 512];
    snprintf(src, sizeof src, "parse:%s", path);
    if (pit_store_set_source(s->db, src, &e)) {
      pit_cli_fail(&e);
      *failed = *fatal = 1;
      return;
    }
  }
  struct pit_parse_stats st = {0};
  s->warned = 0;
  s->nruns = 0;
  char ftype[PIT_NAME_MAX];
  if (!a->itype)
    pit_parse_itype_from_path(path, tnames, ntypes, ftype, sizeof ftype);
  char note[64];
  memset(&xs, 0, sizeof xs);
  xs.path = path;
  struct pit_parse_opts po = {a->fmt, runid, a->run != NULL || a->per_dir, a->itype ? a->itype : ftype, a->batch,
                              (int)a->rpn, a->pattern, a->explain ? explain_part : NULL, &xs};
  int rc = pit_parse_file_opts(path, &po, emit, warn, s, &st, &e);
  if (s->warned > MAX_WARN)
    pit_cli_note("%s: %ld more malformed lines not shown", path, s->warned - MAX_WARN);
  /* a log with no init line: the job context it gave (batch, ranks, the
   * iterations per epoch of "i/L") becomes its runs' configuration, as
   * pit_runset_load_log does for the files predict and summary read */
  for (int k = 0; !rc && s->db && k < s->nruns; k++)
    if ((rc = pit_store_set_context(s->db, s->runs[k], st.context, &e)))
      s->broken = 1;
  if (rc) {
    pit_cli_fail(&e);
    *failed = 1;
    *fatal = s->broken; /* a failed store add or write ends everything; a bad input does not */
    return;
  }
  if (a->explain)
    explain_summary(&xs);
  char gnote[160] = "";
  if (st.generic || st.pattern || st.progress || st.glued || st.cut)
    snprintf(gnote, sizeof gnote, "; %ld by the key/value reader, %ld by --pattern, %ld progress only, %ld glued lines split, %ld cut",
             st.generic, st.pattern, st.progress, st.glued, st.cut);
  if (!a->quiet)
    pit_cli_note("parse: %s: %ld lines, %ld records, %ld skipped, %ld malformed (%ld known, %ld merged)%s%s",
                 path, st.lines, st.records, st.skipped, st.malformed, st.known, st.merged,
                 unrec_note(&st, note, sizeof note), gnote);
  else if (st.cut)
    pit_cli_note("parse: %s: %ld parts of glued lines cut, not read", path, st.cut);
  if (st.records == 0) {
    nothing_usable(path, &st, &e);
    pit_cli_fail(&e);
    *failed = 1;
  }
}

int pit_cmd_parse(int argc, char **argv) {
  struct parse_args a = {.fmt = PIT_PARSE_AUTO, .batch = -1, .rpn = -1};
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? 0 : rc;
  struct pit_err e = {0};
  struct pit_catalog cat = {0};
  const char **tnames = NULL;
  int ntypes = a.itype ? 0 : catalog_names(a.catalog, &cat, &tnames, &e);
  if (ntypes < 0) {
    pit_catalog_release(&cat);
    return pit_cli_fail(&e);
  }
  struct sink s = {.fp = stdout, .fname = "stdout", .quiet = a.quiet};
  struct pit_atomic_file af = {0};
  struct writer wr = {0};
  if ((rc = open_sink(&a, &s, &af, &wr)))
    return rc;
  int failed = 0, fatal = 0;
  int nfiles = argc - optind;
  char (*ids)[PIT_NAME_MAX] = calloc((size_t)nfiles, PIT_NAME_MAX);
  char **idp = calloc((size_t)nfiles, sizeof *idp);
  if (!ids || !idp) {
    pit_err_set(&e, PIT_ENOMEM, "out of memory");
    fatal = failed = 1;
    pit_cli_fail(&e);
  } else {
    run_ids(&a, argv + optind, nfiles, ids, idp);
  }
  if (s.db && !fatal && runs_are_new(s.db, idp, nfiles, a.run != NULL || a.per_dir, &e)) {
    pit_cli_fail(&e);
    fatal = failed = 1;
  }
  for (int i = 0; i < nfiles && !fatal; i++)
    parse_one(&a, &s, argv[optind + i], ids[i], tnames, ntypes, &failed, &fatal);
  free(ids);
  free(idp);
  free(tnames);
  pit_catalog_release(&cat);
  return close_sink(&a, &s, &af, failed, fatal);
}

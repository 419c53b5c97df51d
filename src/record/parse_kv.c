/* parse_kv.c — the key/value reader: the fallback for timing and progress lines
 * that no named format claims (docs/parse.md, "Any dialect"). It reads
 *   key: value   key=value   key, value   | key value |   value unit
 * with synonyms for rank, epoch, iteration, batch size, iteration time and epoch
 * time, units s/ms (sec, secs, seconds, msec), "i/L" and "e/N" counts, rates
 * ("9.5it/s", "5ms/step", "45.1 ms/batch"), PyTorch examples' "[e/N][i/L]" and
 * "Train Epoch: e [n/N (p%)]", frameworks' shapes (Megatron's "(ms)" after a key and
 * global batch, Keras' lone "Epoch e/N" counted from 1, DeepSpeed's timestamps and
 * samples/s, mmcv's "Epoch [e]", fairseq's "i / L"), and turns what a line says into records
 * (pit_pl_kv_put, shared with --pattern): an iteration (with its time, or
 * progress only), an epoch, a validation, a checkpoint, or context.
 *
 * Invariants: hand-written scanning, no allocation, no regular expression; a line
 * gives a record only when it names an iteration, an epoch or a time whose meaning
 * it settles; a line with a repeated position key (a second "step=" or "epoch")
 * holds a second line glued to it: p->next is set where it starts. Lines it does
 * not read get a reason in p->reason ("no number", "no known key", ...). Epochs a
 * dialect counts from 1 are recorded from 0; a line's timestamp times only a line
 * that has no time of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "record/parse_impl.h"

void pit_kv_clear(struct pit_kv *kv) {
  memset(kv, 0, sizeof *kv);
  kv->rank = -1;
  kv->epoch = kv->epochs = kv->iter = kv->iters = kv->step = kv->batch = kv->gbatch = -1;
  kv->step_s = kv->epoch_s = kv->val_s = kv->data_s = kv->t = kv->loss = kv->time = NAN;
  kv->srate = kv->clock = kv->bare_s = kv->total_s = NAN;
}

enum kf {
  F_NONE = 0,
  F_RANK,
  F_EPOCH,
  F_EPOCHS,
  F_ITER,
  F_ITERS,
  F_STEP, /* a global step */
  F_BATCH,
  F_GBATCH, /* the global batch: "global batch size" (Megatron), "train_batch_size" (DeepSpeed) */
  F_SRATE,  /* samples per second of the step: "CurrSamplesPerSec" (DeepSpeed) */
  F_RATE,   /* steps per second: fairseq's "ups" (updates per second) */
  F_TIME, /* "time", "took": iteration or epoch, as the line says */
  F_ITIME,
  F_ETIME,
  F_VTIME,
  F_DTIME,
  F_ELAPSED,
  F_TOTAL, /* the whole training's time: HF Trainer's "train_runtime" */
  F_LOSS,
  F_METRIC /* known, not used (lr, accuracy, ...) */
};

struct kw {
  const char *w;
  enum kf f;
};

/* normalised keys: lower case, letters and digits only */
static const struct kw words[] = {
    {"rank", F_RANK},          {"localrank", F_RANK},      {"globalrank", F_RANK},      {"gpu", F_RANK},
    {"worker", F_RANK},        {"proc", F_RANK},           {"process", F_RANK},         {"rankid", F_RANK},
    {"epoch", F_EPOCH},        {"ep", F_EPOCH},            {"epochs", F_EPOCHS},        {"nepochs", F_EPOCHS},
    {"numepochs", F_EPOCHS},   {"maxepochs", F_EPOCHS},    {"totalepochs", F_EPOCHS},   {"iteration", F_ITER},
    {"iter", F_ITER},          {"it", F_ITER},             {"step", F_ITER},            {"batch", F_ITER},
    {"batchidx", F_ITER},      {"globalstep", F_STEP},     {"iterations", F_ITERS},     {"iters", F_ITERS},
    {"steps", F_ITERS},        {"batches", F_ITERS},       {"numsteps", F_ITERS},       {"nsteps", F_ITERS},
    {"numbatches", F_ITERS},   {"stepsperepoch", F_ITERS}, {"itersperepoch", F_ITERS},  {"batchsize", F_BATCH},
    {"bs", F_BATCH},           {"bsz", F_BATCH},           {"localbatchsize", F_BATCH}, {"time", F_TIME},
    {"took", F_TIME},          {"duration", F_TIME},       {"timeit", F_ITIME},         {"timeiter", F_ITIME},
    {"timestep", F_ITIME},     {"timebatch", F_ITIME},     {"timeperit", F_ITIME},      {"timeperiter", F_ITIME},
    {"timeperstep", F_ITIME},  {"timeperbatch", F_ITIME},  {"timeepoch", F_ETIME},      {"elapsed", F_ELAPSED},
    {"elapsedtime", F_ELAPSED}, {"loss", F_LOSS},          {"lr", F_METRIC},            {"acc", F_METRIC},
    {"accuracy", F_METRIC},    {"top1", F_METRIC},         {"top5", F_METRIC},          {"ppl", F_METRIC},
    {"perplexity", F_METRIC},  {"gradnorm", F_METRIC},     {"seed", F_METRIC},          {"lossd", F_METRIC},
    {"lossg", F_METRIC},       {"worldsize", F_METRIC},    {"eta", F_METRIC},
    {"timeperiteration", F_ITIME}, /* Megatron's "elapsed time per iteration (ms)" */
    {"globalbatchsize", F_GBATCH}, {"trainbatchsize", F_GBATCH}, {"currsamplespersec", F_SRATE},
    {"runningavgsamplespersec", F_METRIC}, /* DeepSpeed's mean since the start: not this step's */
    {"numupdates", F_STEP},    {"ups", F_RATE},            {"wall", F_ELAPSED}, /* fairseq */
    {"trainruntime", F_TOTAL}, {"evalruntime", F_VTIME}, /* HF Trainer's summary and evaluation dicts */
};

static enum kf lookup(const char *k) {
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (words[i].w[0] == k[0] && words[i].w[1] == k[1] && strcmp(words[i].w, k) == 0)
      return words[i].f;
  return F_NONE;
}

#define MAXW 4
struct key {
  char w[MAXW][24]; /* the last words, normalised */
  int n;
  const char *start; /* where the key's first word starts */
};

/* "<what>time", "<what>took", "<what>duration" (what: it, step, epoch, data, val,
 * wall, ...; or nothing): the time field it names; F_NONE if k is no such word. */
static enum kf time_word(const char *k) {
  static const char *const tails[] = {"time", "took", "duration"};
  size_t n = strlen(k);
  for (size_t i = 0; i < 3; i++) {
    size_t t = strlen(tails[i]);
    if (n < t || strcmp(k + n - t, tails[i]) != 0)
      continue;
    char w[MAXW * 24 + 1];
    memcpy(w, k, n - t);
    w[n - t] = 0;
    if (!w[0])
      return F_TIME;
    enum kf g = lookup(w);
    if (g == F_ITER || g == F_STEP)
      return F_ITIME;
    if (g == F_EPOCH)
      return F_ETIME;
    if (!strcmp(w, "data") || !strcmp(w, "dataload") || !strcmp(w, "load"))
      return F_DTIME;
    if (!strcmp(w, "val") || !strcmp(w, "validation") || !strcmp(w, "eval") || !strcmp(w, "test"))
      return F_VTIME;
    if (!strcmp(w, "elapsed") || !strcmp(w, "wall") || !strcmp(w, "total") || !strcmp(w, "walltime"))
      return F_ELAPSED;
    return F_NONE;
  }
  return F_NONE;
}

/* The field a key names (its words joined, then fewer from the left: "Train
 * Epoch" is an epoch), and in *scale the seconds of one unit of a time value
 * without a unit (a key "step_time_ms": 1e-3). */
static enum kf key_field(const struct key *k, double *scale) {
  *scale = 1;
  char all[MAXW * 24 + 1];
  size_t off[MAXW], n = 0;
  for (int i = 0; i < k->n; i++) { /* joined once; the shorter keys are its tails */
    off[i] = n;
    size_t l = strlen(k->w[i]);
    memcpy(all + n, k->w[i], l);
    n += l;
  }
  all[n] = 0;
  for (int from = 0; from < k->n; from++) {
    char *key = all + off[from];
    size_t kn = n - off[from];
    if (kn > 24) /* longer than any key pitstop knows ("iterationduration" + "ms") */
      continue;
    enum kf f = lookup(key);
    if (f == F_NONE || f == F_TIME) {
      enum kf g = time_word(key);
      f = g != F_NONE ? g : f;
    }
    if (f == F_NONE && kn > 2 && key[kn - 2] == 'm' && key[kn - 1] == 's') { /* "time_ms", "steptimems" */
      key[kn - 2] = 0;
      f = time_word(key);
      key[kn - 2] = 'm';
      if (f != F_NONE)
        *scale = 1e-3;
    }
    if (f != F_NONE)
      return f;
  }
  return F_NONE;
}

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

/* Case-insensitive: the word at s (ending at a non-letter) is w. */
static int word_is(const char *s, const char *end, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(end - s) < n)
    return 0;
  for (size_t i = 0; i < n; i++)
    if ((s[i] | 0x20) != w[i] && s[i] != w[i])
      return 0;
  return s + n == end || !is_alpha(s[n]);
}

/* A unit after a number (at most one blank between): the seconds per unit in *sec,
 * or a per-iteration unit (ms/batch, s/it: *per_iter) or a rate (it/s: *rate).
 * Returns the bytes it took, 0 if none. */
static size_t unit(const char *s, const char *end, double *sec, int *per_iter, int *rate) {
  static const struct {
    const char *u;
    double sec;
    int per_iter, rate;
  } units[] = {
      {"ms/batch", 1e-3, 1, 0}, {"ms/step", 1e-3, 1, 0}, {"ms/iter", 1e-3, 1, 0}, {"ms/it", 1e-3, 1, 0},
      {"s/batch", 1, 1, 0},     {"s/step", 1, 1, 0},     {"s/iter", 1, 1, 0},     {"s/it", 1, 1, 0},
      {"sec/it", 1, 1, 0},      {"sec/step", 1, 1, 0},   {"sec/batch", 1, 1, 0},  {"it/s", 1, 0, 1},
      {"its/s", 1, 0, 1},       {"iter/s", 1, 0, 1},     {"steps/s", 1, 0, 1},    {"step/s", 1, 0, 1},
      {"batches/s", 1, 0, 1},   {"milliseconds", 1e-3, 0, 0}, {"millisecond", 1e-3, 0, 0},
      {"msecs", 1e-3, 0, 0},    {"msec", 1e-3, 0, 0},    {"ms", 1e-3, 0, 0},      {"seconds", 1, 0, 0},
      {"second", 1, 0, 0},      {"secs", 1, 0, 0},       {"sec", 1, 0, 0},        {"s", 1, 0, 0},
      {"us", 1e-6, 0, 0},       {"minutes", 60, 0, 0},   {"minute", 60, 0, 0},    {"mins", 60, 0, 0},
      {"min", 60, 0, 0},
  };
  const char *q = s;
  if (q < end && *q == ' ')
    q++;
  if (q >= end || !is_alpha(*q)) /* most numbers: no unit */
    return 0;
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    if (units[i].u[0] != *q)
      continue;
    size_t n = strlen(units[i].u);
    if ((size_t)(end - q) >= n && memcmp(q, units[i].u, n) == 0 && (q + n == end || !is_alpha(q[n]))) {
      if (q > s && !units[i].per_iter && !units[i].rate && n == 1)
        return 0; /* "3 s" is a unit, "3 step" is not: a lone letter after a blank is taken only at its end */
      *sec = units[i].sec;
      *per_iter = units[i].per_iter;
      *rate = units[i].rate;
      return (size_t)(q + n - s);
    }
  }
  return 0;
}

/* Sets a position field once; a second one means another line is glued here. */
static int set_pos(int64_t *dst, int64_t v) {
  if (*dst >= 0)
    return 0;
  *dst = v;
  return 1;
}

/* What scan carries from one token of a line to the next. */
struct scan_st {
  struct key k;                         /* the key words before a value */
  int64_t bare[4];                      /* counts "n/N" with no key: "[e/N][i/L]", "10/100" */
  int nbare, bare_pct;
  int saw_save, saw_ckpt, saw_resume;   /* "saved"/"snapshot", "checkpoint", "resuming": a line about one */
  double kscale;                        /* seconds per unit a key names in parentheses ("(ms)"), 0 none */
  int kcounter;                         /* the key is written "time/<word>" (Composer's "time/batch: 15"):
                                           with a plain integer it counts progress, it is no duration */
};

/* A word at *qp: a word of a key, a key with its value
 * glued on ("GPU0", "rank1"), or the path a saved checkpoint names. *qp moves
 * past what it took. Returns 0, or 1 when a repeated position key starts a second
 * line at *glue. */
static int scan_word(struct scan_st *st, const char *s, const char *end, const char **qp, struct pit_kv *kv,
                     const char **glue) {
  const char *q = *qp;
  const char *w = q;
  while (q < end && (is_alpha(*q) || pl_isdigit(*q) ||
                     ((*q == '-' || *q == '/') && q + 1 < end && is_alpha(q[1]) && q > w)))
    q++;
  const char *we = q;
  const char *dg = we;
  while (dg > w && pl_isdigit(dg[-1]))
    dg--;
  char norm[24];
  size_t n = 0;
  for (const char *a = w; a < dg && n + 1 < sizeof norm; a++)
    if (is_alpha(*a) && *a != '_')
      norm[n++] = (char)(*a | 0x20);
    else if (pl_isdigit(*a))
      norm[n++] = *a;
  norm[n] = 0;
  char c0 = (char)(*w | 0x20);
  if (c0 == 's' && (word_is(w, we, "saved") || word_is(w, we, "saving") || word_is(w, we, "snapshot")))
    st->saw_save |= (w[1] | 0x20) == 'a', st->saw_ckpt |= (w[1] | 0x20) == 'n';
  if (c0 == 'c' && (word_is(w, we, "checkpoint") || word_is(w, we, "ckpt")))
    st->saw_ckpt = 1;
  if ((c0 == 'r' || c0 == 'l') && (word_is(w, we, "resuming") || word_is(w, we, "resumed") || word_is(w, we, "loading")))
    st->saw_resume = 1;
  if (st->saw_save && st->saw_ckpt && (c0 == 'a' || c0 == 't') && (word_is(w, we, "at") || word_is(w, we, "to"))) { /* the path after */
    const char *a = we;
    pl_ws(&a, end);
    const char *b = a;
    while (b < end && *b != ' ' && *b != '\t' && *b != '|' && *b != ',')
      b++;
    if (b > a) {
      kv->path = a;
      kv->path_len = (size_t)(b - a);
      q = b;
      *qp = q;
      return 0;
    }
  }
  if (dg < we && dg > w && n > 0) { /* "GPU0", "rank1": a key and its value */
    enum kf f = lookup(norm);
    if (f == F_RANK || f == F_EPOCH || f == F_ITER) {
      int64_t v = 0;
      const char *a = dg;
      if (pl_i64(&a, we, &v)) {
        int64_t *dst = f == F_RANK ? NULL : f == F_EPOCH ? &kv->epoch : &kv->iter;
        if (f == F_RANK) {
          if (kv->rank >= 0) {
            *glue = (w > s && w[-1] == '[') ? w - 1 : w;
            return 1;
          }
          kv->rank = v <= 1000000 ? (int)v : -1;
        } else if (!set_pos(dst, v)) {
          *glue = (w > s && w[-1] == '[') ? w - 1 : w;
          return 1;
        }
        kv->nkeys++;
        st->k.n = 0;
        *qp = q;
        return 0;
      }
    }
  }
  if (n == 0) {
    *qp = q;
    return 0;
  }
  if (st->k.n == MAXW) {
    memmove(st->k.w[0], st->k.w[1], sizeof st->k.w[0] * (MAXW - 1));
    st->k.n--;
  }
  if (st->k.n == 0) {
    st->k.start = (w > s && w[-1] == '[') ? w - 1 : w;
    st->kscale = 0;
    st->kcounter = 0;
  }
  if (we - w > 5 && (w[0] | 0x20) == 't' && word_is(w, w + 4, "time") && w[4] == '/')
    st->kcounter = 1;
  memcpy(st->k.w[st->k.n++], norm, n + 1);
  *qp = q;
  return 0;
}

/* A number at *qp (the value of the key before it, a bare count, a time with its
 * unit, a rate, a percentage). *qp moves past what it took. Returns 0, or 1 when a
 * repeated position key starts a second line at *glue. */
static int scan_number(struct scan_st *st, const char *s, const char *end, const char **qp, struct pit_kv *kv,
                       const char **glue) {
  const char *q = *qp;
  const char *num = q;
  double v;
  int dig;
  if (q > s && (pl_isdigit(q[-1]) || q[-1] == '.')) { /* the rest of "00:01" or a version */
    q++;
    *qp = q;
    return 0;
  }
  if (!pit_pl_f64(&q, end, &v, &dig)) {
    q++;
    *qp = q;
    return 0;
  }
  kv->nnums++;
  int64_t total = -1;
  const char *sl = q;
  if (sl + 2 < end && *sl == ' ' && sl[1] == '/' && sl[2] == ' ' && v == floor(v) && !memchr(num, '.', (size_t)(q - num)))
    sl++; /* fairseq's "100 / 1000" */
  if (sl + 1 < end && *sl == '/') { /* "i/L"; Megatron pads L: "100/  500000" (an integer i only) */
    const char *a = sl + 1;
    if (a < end && *a == ' ' && v == floor(v) && !memchr(num, '.', (size_t)(q - num)))
      pl_ws(&a, end);
    if (a < end && pl_isdigit(*a) && pl_i64(&a, end, &total))
      q = a;
  }
  double sec = 1;
  int per_iter = 0, rate = 0;
  size_t un = total < 0 ? unit(q, end, &sec, &per_iter, &rate) : 0;
  int has_unit = un > 0;
  q += un;
  int pct = q < end && *q == '%';
  if (pct)
    q++;
  double scale = 1;
  enum kf f = key_field(&st->k, &scale);
  if (st->kcounter && !has_unit && !per_iter && !rate && !memchr(num, '.', (size_t)(q - num)) &&
      (f == F_ITIME || f == F_ETIME || f == F_TIME))
    f = F_METRIC; /* Composer's "Train time/batch: 15", "time/epoch: 0": counts, not seconds */
  if (has_unit && !per_iter && !rate)
    scale = sec;
  else if (!has_unit && st->kscale > 0) /* "elapsed time per iteration (ms): 250.0" */
    scale = st->kscale;
  int integral = v >= 0 && v == floor(v) && v < 1e15 && !memchr(num, '.', (size_t)(q - num));
  if (per_iter || rate) {
    if (v > 0 || per_iter) {
      if (!isnan(kv->step_s)) {
        /* a second time of the same kind: keep the first */
      } else {
        kv->step_s = rate ? 1 / v : v * sec;
        if (per_iter && sec == 1e-3)
          kv->step_s = v / 1000;
      }
      kv->nkeys++;
    }
  } else if (pct) {
    if (st->k.n == 0 && st->nbare > 0)
      st->bare_pct = 1;
  } else if (f == F_NONE || (st->k.n == 0)) {
    if (st->k.n == 0 && total >= 0 && integral && st->nbare < 4) { /* "[e/N][i/L]", "10/100" */
      st->bare[st->nbare++] = (int64_t)v;
      st->bare[st->nbare++] = total;
    } else if (st->k.n == 0 && has_unit && v >= 0 && isnan(kv->bare_s)) { /* Keras' "- 5s 2ms/step" */
      kv->bare_s = sec == 1e-3 ? v / 1000 : v * sec;
    }
  } else if (f == F_RANK || f == F_EPOCH || f == F_ITER || f == F_STEP || f == F_EPOCHS || f == F_ITERS ||
             f == F_BATCH || f == F_GBATCH) {
    if (integral) {
      int ok = 1;
      if (f == F_RANK) {
        if (kv->rank >= 0)
          ok = 0;
        else
          kv->rank = v <= 1000000 ? (int)v : -1;
      } else if (f == F_EPOCH) {
        ok = set_pos(&kv->epoch, (int64_t)v);
        if (ok && total > 0)
          kv->epochs = total;
      } else if (f == F_ITER) {
        ok = set_pos(&kv->iter, (int64_t)v);
        if (ok && total > 0)
          kv->iters = total;
      } else if (f == F_STEP) {
        ok = set_pos(&kv->step, (int64_t)v);
      } else if (f == F_EPOCHS) {
        kv->epochs = (int64_t)v;
      } else if (f == F_ITERS) {
        kv->iters = (int64_t)v;
      } else if (f == F_GBATCH) {
        if (v > 0)
          kv->gbatch = (int64_t)v;
      } else if (v > 0) {
        kv->batch = (int64_t)v;
      }
      if (!ok) { /* a second rank, epoch or iteration: another line starts at this key */
        *glue = st->k.start;
        return 1;
      }
      kv->nkeys++;
    }
  } else if (f == F_LOSS) {
    if (isnan(kv->loss))
      kv->loss = v;
    kv->nkeys++;
  } else if (f == F_METRIC) {
    kv->nkeys++;
  } else if (f == F_RATE) {
    if (v > 0 && isnan(kv->step_s))
      kv->step_s = 1 / v;
    kv->nkeys++;
  } else if (f == F_SRATE) {
    if (v > 0 && isnan(kv->srate))
      kv->srate = v;
    kv->nkeys++;
  } else if (v >= 0) { /* times */
    double x = scale == 1e-3 ? v / 1000 : v * scale;
    double *dst = f == F_ITIME ? &kv->step_s : f == F_ETIME ? &kv->epoch_s : f == F_VTIME ? &kv->val_s
                : f == F_DTIME ? &kv->data_s : f == F_ELAPSED ? &kv->t : f == F_TOTAL ? &kv->total_s : &kv->time;
    if (isnan(*dst))
      *dst = x;
    if (f == F_TIME)
      kv->ambiguous_time = 1;
    kv->nkeys++;
  }
  st->k.n = 0;
  st->kscale = 0;
  *qp = q;
  return 0;
}

/* The line's end: its bare counts taken as positions, a checkpoint saved or a
 * resume said when the line has a position. */
static void scan_end(struct scan_st *st, struct pit_kv *kv) {
  if (st->nbare >= 2) { /* bare counts: "[e/N][i/L]" (two), "[i/L]" or "10/100" (one) */
    int64_t n1 = st->bare[0], t1 = st->bare[1];
    if (st->nbare == 4 && kv->epoch < 0 && kv->iter < 0) {
      kv->epoch = n1;
      kv->epochs = t1;
      kv->iter = st->bare[2];
      kv->iters = st->bare[3];
    } else if (kv->iter < 0) {
      kv->iter = n1;
      kv->iters = t1;
      kv->samples = st->bare_pct && kv->epoch >= 0; /* "Train Epoch: e [n/N (p%)]": samples */
    }
    kv->nkeys++;
  }
  /* a count complete ("1875/1875") with a bare time beside it: Keras' end-of-epoch summary, whose
   * "5s" is the epoch's time (its "2ms/step" the step's) */
  if (kv->iter > 0 && kv->iter == kv->iters && !isnan(kv->bare_s) && isnan(kv->epoch_s))
    kv->epoch_s = kv->bare_s;
  /* "Epoch 2/10" and nothing else: an epoch begins (Keras counts them from 1) */
  kv->epoch_alone = kv->epoch >= 0 && kv->epochs > 0 && kv->iter < 0 && kv->step < 0 && kv->nnums == 1 &&
                    isnan(kv->step_s) && isnan(kv->time);
  int pos = kv->epoch >= 0 || kv->iter >= 0 || kv->step >= 0;
  kv->ckpt = st->saw_save && st->saw_ckpt && pos; /* "Epoch 4 | Training snapshot saved at PATH" */
  kv->resume = st->saw_resume && !kv->ckpt && pos;
}

/* Reads [s, end) into kv. Returns 0, or 1 when a repeated position key starts a
 * second line at *glue. */
static int scan(const char *s, const char *end, struct pit_kv *kv, const char **glue) {
  struct scan_st st = {.k = {.n = 0, .start = NULL}};
  const char *q = s;
  while (q < end) {
    char c = *q;
    if (is_alpha(c)) { /* a word: letters, digits, '_', '-' and '/' between letters ("time/it") */
      if (scan_word(&st, s, end, &q, kv, glue))
        return 1;
      continue;
    }
    if (pl_isdigit(c) || ((c == '.' || c == '-' || c == '+') && q + 1 < end && pl_isdigit(q[1]))) {
      if (scan_number(&st, s, end, &q, kv, glue))
        return 1;
      continue;
    }

    /* a unit in parentheses after a key: "elapsed time per iteration (ms): 250.0" (Megatron) */
    if (c == '(' && st.k.n > 0 && q + 1 < end && is_alpha(q[1])) {
      double sec = 1;
      int per_iter = 0, rate = 0;
      size_t un = unit(q + 1, end, &sec, &per_iter, &rate);
      if (un > 0 && !per_iter && !rate && q + 1 + un < end && q[1 + un] == ')') {
        st.kscale = sec;
        q += un + 2;
        continue;
      }
    }
    /* "Epoch(train) [1][50/7330]" (mmengine's): the phase in parentheses glued to an epoch or
     * iteration key keeps the key; "(val)"/"(test)" there says the line is a validation iteration,
     * not a training one ("loss (val): 0.6" is only a metric: its line stays a training line) */
    if (c == '(' && st.k.n > 0 && q > s && is_alpha(q[-1]) && q + 1 < end && is_alpha(q[1])) {
      const char *a = q + 1, *b = a;
      while (b < end && is_alpha(*b))
        b++;
      double scale;
      enum kf f = key_field(&st.k, &scale);
      if (b < end && *b == ')' && (f == F_EPOCH || f == F_ITER) &&
          (word_is(a, b, "train") || word_is(a, b, "val") || word_is(a, b, "test"))) {
        kv->val_line |= !word_is(a, b, "train");
        q = b + 1;
        continue;
      }
    }
    /* "Epoch [1][50/7330]" (mmcv's, counting epochs from 1): the epoch's number in brackets */
    if (c == '[' && st.k.n > 0 && q + 1 < end && pl_isdigit(q[1])) {
      const char *a = q + 1;
      int64_t v;
      double scale;
      if (pl_i64(&a, end, &v) && a < end && *a == ']' && key_field(&st.k, &scale) == F_EPOCH) {
        if (!set_pos(&kv->epoch, v)) {
          *glue = st.k.start;
          return 1;
        }
        kv->epoch_from1 = 1;
        kv->nkeys++;
        kv->nnums++;
        st.k.n = 0;
        q = a + 1;
        continue;
      }
    }
    /* separators: a key lives across blanks, ':', '=', ',' and '.', not across '|', brackets, ';' */
    if (c == '|' || c == '[' || c == ']' || c == '(' || c == ')' || c == ';' || c == '{' || c == '}' || c == '<' ||
        c == '>')
      st.k.n = 0;
    q++;
  }
  scan_end(&st, kv);
  return 0;
}

/* n digits at *q as a number; *q moves past them. */
static int digits(const char **q, const char *end, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++, (*q)++) {
    if (*q >= end || !pl_isdigit(**q))
      return 0;
    v = v * 10 + (**q - '0');
  }
  *out = v;
  return 1;
}

/* The byte at *q is a or b; *q moves past it. */
static int sep_is(const char **q, const char *end, char a, char b) {
  if (*q >= end || (**q != a && **q != b))
    return 0;
  (*q)++;
  return 1;
}

/* The timestamp a line starts with, as Python's logging writes it (DeepSpeed's
 * "[2024-05-01 10:00:02,500] ...", mmcv's "2024-05-01 10:00:00,000 - ..."; also
 * ISO's 'T' and '.', and mmengine's "2024/05/01 10:00:00 - ..."): seconds since 1970
 * in the timestamp's own zone, NaN if the line starts otherwise. Only differences
 * are used. *slash_end is set past a timestamp whose date is written with '/', whose
 * "2024/05" would otherwise read as a count; else left alone. */
static double line_clock(const char *s, const char *end, const char **slash_end) {
  const char *q = s;
  if (q < end && *q == '[')
    q++;
  int y, mo, d, h, mi, se;
  const char ds = q + 4 < end && q[4] == '/' ? '/' : '-'; /* the date's separator, both times */
  if (!digits(&q, end, 4, &y) || !sep_is(&q, end, ds, ds) || !digits(&q, end, 2, &mo) || !sep_is(&q, end, ds, ds) ||
      !digits(&q, end, 2, &d) || !sep_is(&q, end, ' ', 'T') ||
      !digits(&q, end, 2, &h) || !sep_is(&q, end, ':', ':') || !digits(&q, end, 2, &mi) ||
      !sep_is(&q, end, ':', ':') || !digits(&q, end, 2, &se))
    return NAN;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
    return NAN;
  double frac = 0, scale = 0.1;
  if (q + 1 < end && (*q == ',' || *q == '.') && pl_isdigit(q[1]))
    for (q++; q < end && pl_isdigit(*q); q++, scale /= 10)
      frac += (*q - '0') * scale;
  if (ds == '/')
    *slash_end = q;
  struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = se};
  return (double)timegm(&tm) + frac; /* the zone does not matter: only differences are used */
}

/* ---- records ---- */

static void set_context(struct pit_parser *p, const struct pit_kv *kv, int rank) {
  char *o = p->info;
  size_t n = 0, cap = sizeof p->info;
#define INFO(...) (n += (size_t)snprintf(o + n, n < cap ? cap - n : 0, __VA_ARGS__))
  if (kv->batch > 0 && !p->batch_logged) {
    p->batch_per_rank = kv->batch;
    p->batch_logged = 1;
  }
  if (kv->batch > 0)
    INFO("%sbatch size %lld", n ? ", " : "", (long long)kv->batch);
  if (kv->iters > 0 && !kv->samples) {
    struct pit_pl_rank *rs = pit_pl_rank(p, rank);
    if (rs)
      rs->per_epoch = kv->iters;
    p->per_epoch = kv->iters;
    INFO("%s%lld iterations per %s", n ? ", " : "", (long long)kv->iters, kv->epoch >= 0 ? "epoch" : "job");
  }
  if (kv->epochs > 0) {
    p->epochs = kv->epochs;
    INFO("%s%lld epochs", n ? ", " : "", (long long)kv->epochs);
  }
  if (rank >= 0 && n == 0)
    INFO("rank %d", rank);
#undef INFO
}

int pit_pl_kv_put(struct pit_parser *p, const struct pit_kv *kv, struct pit_err *e) {
  int rank = kv->rank >= 0 ? kv->rank : p->seg_rank;
  struct pit_kv k = *kv;
  if (k.val_line) {
    /* mmengine's "Epoch(val) [1][50/500] ... time: 0.1": one validation iteration's time, which no
     * record kind holds (a validation record is a whole validation's): known, no record, and its
     * counts are not the training's iterations per epoch */
    snprintf(p->info, sizeof p->info, "a validation iteration, not a training one (no record)");
    return PL_INFO;
  }
  /* "[n/N (p%)]" counts samples: iterations when the batch size is known */
  if (k.samples && k.iter >= 0) {
    if (p->batch_per_rank > 0) {
      k.iter /= p->batch_per_rank;
      k.iters = (k.iters + p->batch_per_rank - 1) / p->batch_per_rank;
    } else {
      p->progress_samples = 1;
    }
    k.samples = 0;
  }
  if (k.gbatch > 0) /* the global batch: its line's records' and the lines' after */
    p->kv_gbatch = k.gbatch;
  int base = 0;
  if (k.epoch_alone) {
    /* lone "Epoch e/N" lines count from 1 when the first says 1 or more (Keras prints epoch + 1):
     * recorded from 0, as pitstop's own records and the other dialects count */
    if (p->kv_epoch_base < 0)
      p->kv_epoch_base = k.epoch >= 1;
    base = k.epoch >= p->kv_epoch_base ? p->kv_epoch_base : 0;
    k.epoch -= base;
  }
  if (k.epoch_from1 && k.epoch >= 1) /* mmcv's "Epoch [1]" is the first: recorded from 0 */
    k.epoch--;
  if (k.epoch < 0 && k.iter >= 0 && k.step < 0) {
    /* an iteration that names no epoch after a line said an epoch begins (Keras' "1875/1875 [===]"
     * after "Epoch 2/10"): that epoch's */
    struct pit_pl_rank *rs = pit_pl_rank(p, rank);
    if (rs && rs->kv_epoch >= 0)
      k.epoch = rs->kv_epoch;
  }
  if (!isnan(k.clock) && isnan(p->kv_clock0))
    p->kv_clock0 = k.clock;
  set_context(p, &k, rank);
  if (k.resume) {
    snprintf(p->info, sizeof p->info, "a resume notice%s", k.epoch >= 0 ? " (epoch named)" : "");
    return PL_INFO;
  }
  if (k.ckpt) {
    pit_pl_new(p, PIT_REC_CHECKPOINT, rank);
    p->cur->epoch = k.epoch;
    if (k.path) { /* the slot's own buffer: the record may be held past the next line */
      char *buf = p->kv_path[p->cur == &p->slot[0] ? 0 : 1];
      size_t n = k.path_len < sizeof p->kv_path[0] ? k.path_len : sizeof p->kv_path[0] - 1;
      memcpy(buf, k.path, n);
      buf[n] = 0;
      p->cur->path = buf;
    }
    int rc = pit_pl_put(p, K_KV, 9, e);
    return rc < 0 ? rc : PL_RECORD;
  }
  if (!isnan(k.total_s)) { /* HF Trainer's "{'train_runtime': 123.4, ...}": the training's time */
    pit_pl_new(p, PIT_REC_END, rank);
    p->cur->total_s = k.total_s;
    p->cur->t = k.t;
    int rc = pit_pl_put(p, K_KV, 9, e);
    return rc < 0 ? rc : PL_RECORD;
  }
  int has_pos = k.iter >= 0 || k.step >= 0;
  /* a bare "time": the iteration's when the line names one, else the epoch's */
  if (k.ambiguous_time) {
    if (has_pos && isnan(k.step_s))
      k.step_s = k.time;
    else if (!has_pos && k.epoch >= 0 && isnan(k.epoch_s))
      k.epoch_s = k.time;
  }
  int made = 0;
  if (p->have_times && isnan(k.step_s) && isnan(k.epoch_s) && isnan(k.val_s) && has_pos && isnan(k.clock) &&
      isnan(k.srate)) {
    /* where a log has its own times, they win: progress alone adds nothing (a line with a clock or a
     * rate may give its time, below; a line that only says an epoch begins is context, below) */
    snprintf(p->reason, sizeof p->reason, "progress only, and the log has its own times");
    return PL_UNKNOWN;
  }
  if (has_pos || (!isnan(k.step_s) && !k.ambiguous_time)) {
    struct pit_record *q = p->pend;
    if (has_pos && isnan(k.step_s) && p->have_pend && q->type == PIT_REC_ITER && q->rank == rank &&
        q->epoch == k.epoch && q->iter == (k.iter >= 0 ? k.iter : k.step) && (p->pend_kinds & (1u << K_KV))) {
      snprintf(p->reason, sizeof p->reason, "duplicate of the line before (same iteration, no time)");
      return PL_UNKNOWN;
    }
    struct pit_pl_rank *rs = pit_pl_rank(p, rank);
    int64_t L = rs && rs->per_epoch > 0 ? rs->per_epoch : p->per_epoch;
    int64_t step = -1;
    if (k.step >= 0)
      step = k.step;
    else if (k.epoch < 0 && k.iter >= 0)
      step = k.iter; /* no epochs: the count is the job's */
    else if (k.epoch >= 0 && k.iter >= 0 && L > 0)
      step = k.epoch * L + k.iter; /* the rank's i/L, else any rank's */
    int64_t batch = k.gbatch > 0 ? k.gbatch : p->kv_gbatch > 0 ? p->kv_gbatch
                  : p->batch_per_rank > 0 && p->world > 0 ? p->batch_per_rank * p->world : -1;
    if (isnan(k.step_s) && !isnan(k.srate) && batch > 0) /* DeepSpeed's CurrSamplesPerSec: global samples/s */
      k.step_s = (double)batch / k.srate;
    if (step >= 0 && p->have_pend && q->type == PIT_REC_ITER && (p->pend_kinds & (1u << K_KV)) && q->step == step &&
        (q->rank == rank || q->rank < 0 || rank < 0) && (q->epoch == k.epoch || q->epoch < 0 || k.epoch < 0) &&
        (isnan(q->step_s) || isnan(k.step_s))) {
      /* two lines of one step, each saying part of it (DeepSpeed's "[Rank 0] step=10, ..." and
       * "epoch=0/micro_step=10/global_step=10, ..."): one record */
      int was_progress = isnan(q->step_s);
      if (q->rank < 0)
        q->rank = rank;
      if (q->epoch < 0)
        q->epoch = k.epoch;
      if (isnan(q->step_s))
        q->step_s = k.step_s;
      if (isnan(q->data_s))
        q->data_s = k.data_s;
      if (isnan(q->t))
        q->t = !isnan(k.t) ? k.t : !isnan(k.clock) ? k.clock - p->kv_clock0 : NAN;
      if (isnan(q->loss) && q->nlosses == 0)
        q->loss = k.loss;
      if (q->batch < 0)
        q->batch = batch;
      if (was_progress && !isnan(q->step_s) && p->st.progress > 0)
        p->st.progress--; /* the held record was counted as progress only; now it has a time */
      p->have_times |= !isnan(q->step_s);
      if (!isnan(k.clock) && rs && (isnan(rs->kv_clock) || step > rs->kv_clock_step)) {
        rs->kv_clock = k.clock; /* this rank's clock was at this step too */
        rs->kv_clock_step = step;
      }
      return PL_MERGED;
    }
    double t = k.t;
    if (isnan(k.step_s) && !isnan(k.clock) && step >= 0 && rs) {
      /* a line with no time of its own but its clock (a timestamp): t from the stream's first one,
       * and the clock since the rank's last such record spread evenly over the steps between, as
       * pitstop run times progress lines by their arrival (src/control/progress.c) */
      if (isnan(t))
        t = k.clock - p->kv_clock0;
      if (!isnan(rs->kv_clock) && step > rs->kv_clock_step && k.clock >= rs->kv_clock)
        k.step_s = (k.clock - rs->kv_clock) / (double)(step - rs->kv_clock_step);
      rs->kv_clock = k.clock;
      rs->kv_clock_step = step;
    }
    pit_pl_new(p, PIT_REC_ITER, rank);
    p->cur->epoch = k.epoch;
    p->cur->iter = k.iter >= 0 ? k.iter : k.step;
    p->cur->step = step;
    p->cur->step_s = k.step_s;
    p->cur->data_s = k.data_s;
    p->cur->t = t;
    p->cur->loss = k.loss;
    p->cur->batch = batch;
    if (isnan(k.step_s))
      p->st.progress++;
    int rc = pit_pl_put(p, K_KV, 9, e);
    if (rc < 0)
      return rc;
    made = 1;
  }
  if (!isnan(k.epoch_s) || !isnan(k.val_s)) {
    pit_pl_new(p, !isnan(k.epoch_s) ? PIT_REC_EPOCH : PIT_REC_VALIDATION, rank);
    p->cur->epoch = k.epoch;
    p->cur->epoch_s = k.epoch_s;
    p->cur->val_s = isnan(k.epoch_s) ? k.val_s : NAN;
    p->cur->t = k.t;
    int rc = pit_pl_put(p, K_KV, 9, e);
    if (rc < 0)
      return rc;
    if (!isnan(k.epoch_s) && !isnan(k.val_s)) {
      pit_pl_new(p, PIT_REC_VALIDATION, rank);
      p->cur->epoch = k.epoch;
      p->cur->val_s = k.val_s;
      if ((rc = pit_pl_put(p, K_KV, 9, e)) < 0)
        return rc;
    }
    made = 1;
  }
  if (made)
    return PL_RECORD;
  if (k.epoch >= 0 && isnan(k.time)) {
    /* an epoch and nothing of it done: epoch e begins, so epoch e-1 ended */
    struct pit_pl_rank *rs = pit_pl_rank(p, rank);
    if (!rs)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    int64_t prev = rs->kv_epoch;
    if (prev == k.epoch) {
      snprintf(p->reason, sizeof p->reason, "duplicate of an earlier line (epoch %lld began already)",
               (long long)k.epoch);
      return PL_UNKNOWN;
    }
    rs->kv_epoch = k.epoch;
    p->kv_epoch_start = k.epoch;
    if (prev < 0 || k.epoch < prev || p->have_times) {
      /* the first epoch this rank prints: nothing done yet; or the log has its own times, and the
       * records of the epoch before said where it ended */
      size_t n = strlen(p->info);
      snprintf(p->info + n, sizeof p->info - n, "%sepoch %lld begins%s", n ? "; " : "", (long long)k.epoch,
               base ? " (printed from 1)" : "");
      return PL_INFO;
    }
    /* progress: the last iteration of the epoch before is done */
    int64_t L = rs->per_epoch;
    pit_pl_new(p, L > 0 ? PIT_REC_ITER : PIT_REC_EPOCH, rank);
    p->cur->epoch = k.epoch - 1;
    if (L > 0) {
      p->cur->iter = L - 1;
      p->cur->step = k.epoch * L - 1;
      if (p->batch_per_rank > 0 && p->world > 0)
        p->cur->batch = p->batch_per_rank * p->world;
    }
    p->st.progress++;
    int rc = pit_pl_put(p, K_KV, 9, e);
    return rc < 0 ? rc : PL_RECORD;
  }
  if (p->info[0] && (k.batch > 0 || k.iters > 0 || k.epochs > 0))
    return PL_INFO;
  if (k.nnums == 0)
    snprintf(p->reason, sizeof p->reason, "no number");
  else if (k.nkeys == 0)
    snprintf(p->reason, sizeof p->reason, "no known key");
  else if (k.ambiguous_time || !isnan(k.t))
    snprintf(p->reason, sizeof p->reason, "a time with no iteration or epoch to say whose");
  else
    snprintf(p->reason, sizeof p->reason, "no iteration, epoch or time (only metrics or a rank)");
  return PL_UNKNOWN;
}

int pit_pl_kv(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  struct pit_kv kv;
  pit_kv_clear(&kv);
  const char *glue = NULL;
  if (s < end && (pl_isdigit(*s) || *s == '['))
    kv.clock = line_clock(s, end, &s);
  /* torchtune's "1|20|Loss: 2.34:  2%|...| 20/1000 [...]": a tqdm bar whose description starts
   * with the epoch (printed from 1) and the global step; the bar's count is the epoch's iteration */
  const char *a = s;
  int64_t ep, gs;
  if (a < end && pl_isdigit(*a) && pl_i64(&a, end, &ep) && a < end && *a == '|' && ++a < end && pl_isdigit(*a) &&
      pl_i64(&a, end, &gs) && a + 1 < end && *a == '|' && is_alpha(a[1])) {
    kv.epoch = ep;
    kv.epoch_from1 = 1;
    kv.step = gs;
    kv.nkeys += 2;
    kv.nnums += 2;
    s = a + 1;
  }
  if (scan(s, end, &kv, &glue) && glue && glue > s) {
    p->next = glue;
    p->next_glued = 1;
  }
  int v = pit_pl_kv_put(p, &kv, e);
  if (v == PL_UNKNOWN && p->next_glued && glue) { /* the part before the repeated key is not a line */
    p->next = glue;
  }
  return v;
}

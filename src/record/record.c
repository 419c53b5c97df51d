/* record.c — struct pit_record: JSON Lines formatting (hand-written, hot path)
 * and parsing (cJSON). Absent fields are NaN / -1 / NULL and are not written. */
#include "pitstop/record.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *type_names[PIT_REC_NTYPES] = {
    "none", "init", "iter", "validation", "checkpoint", "epoch", "node", "decision", "end"};

const char *pit_rec_type_name(enum pit_rec_type t) {
  return (t >= 0 && t < PIT_REC_NTYPES) ? type_names[t] : "none";
}

enum pit_rec_type pit_rec_type_parse(const char *name) {
  for (int i = 1; i < PIT_REC_NTYPES; i++)
    if (strcmp(name, type_names[i]) == 0)
      return (enum pit_rec_type)i;
  return PIT_REC_NONE;
}

uint64_t pit_sample_mix(uint64_t i) {
  /* splitmix64's finaliser: consecutive indices give unrelated terms */
  uint64_t z = i + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void pit_samples_digest(const int64_t *idx, int64_t n, char out[17]) {
  uint64_t sum = 0;
  for (int64_t k = 0; k < n; k++)
    sum += pit_sample_mix((uint64_t)idx[k]);
  snprintf(out, 17, "%016llx", (unsigned long long)sum);
}

void pit_record_init(struct pit_record *r) {
  memset(r, 0, sizeof *r);
  r->type = PIT_REC_NONE;
  r->rank = -1;
  r->t = NAN;
  r->epoch = r->iter = r->step = r->batch = -1;
  r->step_s = r->data_s = NAN;
  r->loss = NAN;
  r->init_s = r->rdzv_s = NAN;
  r->ranks = r->nodes = -1;
  r->val_s = r->ckpt_s = r->epoch_s = r->total_s = NAN;
  r->accuracy = NAN;
  r->bytes = -1;
  r->price_h = NAN;
  r->row.vcpus = r->row.cpus = -1;
  r->row.price_h = r->row.spot_price_h = r->row.billing_s = r->row.min_s = r->row.cpu_quota = NAN;
}

void pit_record_release(struct pit_record *r) {
  PIT_FREE_ALL(r->compute_s, r->wait_s, r->config, r->path, r->detail);
  pit_record_init(r);
}

int pit_record_set_ranks(struct pit_record *r, int n) {
  free(r->compute_s);
  free(r->wait_s);
  r->compute_s = r->wait_s = NULL;
  r->nranks = 0;
  if (n <= 0)
    return 0;
  r->compute_s = malloc(sizeof(double) * (size_t)n);
  r->wait_s = malloc(sizeof(double) * (size_t)n);
  if (!r->compute_s || !r->wait_s) {
    free(r->compute_s);
    free(r->wait_s);
    r->compute_s = r->wait_s = NULL;
    return PIT_ENOMEM;
  }
  for (int i = 0; i < n; i++)
    r->compute_s[i] = r->wait_s[i] = NAN;
  r->nranks = n;
  return 0;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int pit_record_copy(struct pit_record *dst, const struct pit_record *src) {
  *dst = *src;
  dst->compute_s = dst->wait_s = NULL;
  dst->nranks = 0;
  dst->config = dup_or_null(src->config);
  dst->path = dup_or_null(src->path);
  dst->detail = dup_or_null(src->detail);
  if (pit_record_set_ranks(dst, src->nranks))
    return PIT_ENOMEM;
  if (src->nranks) {
    memcpy(dst->compute_s, src->compute_s, sizeof(double) * (size_t)src->nranks);
    memcpy(dst->wait_s, src->wait_s, sizeof(double) * (size_t)src->nranks);
  }
  return 0;
}

/* ---------- formatting ---------- */

struct sb {
  char **buf;
  size_t *cap;
  size_t len;
  int oom;
};

static void sb_reserve(struct sb *b, size_t more) {
  if (pit_grow(b->buf, b->cap, b->len + more + 1, 1))
    b->oom = 1;
}

static void sb_printf(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sb *b, const char *fmt, ...) {
  if (b->oom)
    return;
  for (;;) {
    size_t room = *b->cap - b->len;
    va_list ap;
    va_start(ap, fmt);
    int n = *b->buf ? vsnprintf(*b->buf + b->len, room, fmt, ap) : -1;
    va_end(ap);
    if (n >= 0 && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    sb_reserve(b, n > 0 ? (size_t)n + 1 : 256);
    if (b->oom)
      return;
  }
}

static void sb_str(struct sb *b, const char *s) {
  sb_printf(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      sb_printf(b, "\\%c", *p);
    else if (*p < 0x20)
      sb_printf(b, "\\u%04x", *p);
    else
      sb_printf(b, "%c", *p);
  }
  sb_printf(b, "\"");
}

char *pit_json_quote(const char *s) {
  char *buf = NULL;
  size_t cap = 0;
  struct sb b = {&buf, &cap, 0, 0};
  sb_str(&b, s);
  if (b.oom) {
    free(buf);
    return NULL;
  }
  return buf;
}

static void num(struct sb *b, const char *key, double v) {
  if (!isnan(v))
    sb_printf(b, ",\"%s\":%.9g", key, v);
}
static void inum(struct sb *b, const char *key, int64_t v) {
  if (v >= 0)
    sb_printf(b, ",\"%s\":%lld", key, (long long)v);
}
static void str(struct sb *b, const char *key, const char *v) {
  if (v && *v) {
    sb_printf(b, ",\"%s\":", key);
    sb_str(b, v);
  }
}
static void raw(struct sb *b, const char *key, const char *json) {
  if (json && *json)
    sb_printf(b, ",\"%s\":%s", key, json);
}
static void arr(struct sb *b, const char *key, const double *v, int n) {
  if (n <= 0)
    return;
  sb_printf(b, ",\"%s\":[", key);
  for (int i = 0; i < n; i++) {
    if (isnan(v[i]))
      sb_printf(b, "%snull", i ? "," : "");
    else
      sb_printf(b, "%s%.9g", i ? "," : "", v[i]);
  }
  sb_printf(b, "]");
}

int pit_record_format(const struct pit_record *r, char **buf, size_t *cap) {
  struct sb b = {buf, cap, 0, 0};
  sb_reserve(&b, 256);
  sb_printf(&b, "{\"type\":\"%s\",\"run\":", pit_rec_type_name(r->type));
  sb_str(&b, r->run);
  sb_printf(&b, ",\"gen\":%d", r->gen);
  num(&b, "t", r->t);
  inum(&b, "rank", r->rank);
  inum(&b, "epoch", r->epoch);
  inum(&b, "iter", r->iter);
  inum(&b, "step", r->step);
  inum(&b, "batch", r->batch);
  num(&b, "step_s", r->step_s);
  num(&b, "data_s", r->data_s);
  arr(&b, "compute_s", r->compute_s, r->nranks);
  arr(&b, "wait_s", r->wait_s, r->nranks);
  if (r->nlosses > 0) {
    sb_printf(&b, ",\"loss\":{");
    for (int i = 0; i < r->nlosses && i < PIT_MAX_LOSSES; i++) {
      sb_printf(&b, "%s", i ? "," : "");
      sb_str(&b, r->loss_name[i]);
      if (isnan(r->loss_val[i]))
        sb_printf(&b, ":null");
      else
        sb_printf(&b, ":%.9g", r->loss_val[i]);
    }
    sb_printf(&b, "}");
  } else {
    num(&b, "loss", r->loss);
  }
  str(&b, "samples_digest", r->samples);
  num(&b, "init_s", r->init_s);
  num(&b, "rdzv_s", r->rdzv_s);
  inum(&b, "ranks", r->ranks);
  inum(&b, "nodes", r->nodes);
  raw(&b, "config", r->config);
  num(&b, "val_s", r->val_s);
  num(&b, "ckpt_s", r->ckpt_s);
  num(&b, "epoch_s", r->epoch_s);
  num(&b, "total_s", r->total_s);
  str(&b, "status", r->status);
  num(&b, "accuracy", r->accuracy);
  str(&b, "path", r->path);
  inum(&b, "bytes", r->bytes);
  str(&b, "action", r->action);
  str(&b, "node", r->node);
  str(&b, "itype", r->itype);
  num(&b, "price_h", r->price_h);
  str(&b, "market", pit_market_name(r->market));
  str(&b, "zone", r->zone);
  if (r->continued)
    sb_printf(&b, ",\"continued\":true");
  if (r->row.have) {
    sb_printf(&b, ",\"catalog\":{\"vcpus\":%d", r->row.vcpus);
    inum(&b, "cpus", r->row.cpus);
    num(&b, "price_h", r->row.price_h);
    num(&b, "spot_price_h", r->row.spot_price_h);
    num(&b, "billing_s", r->row.billing_s);
    num(&b, "min_s", r->row.min_s);
    num(&b, "cpu_quota", r->row.cpu_quota);
    sb_printf(&b, "}");
  }
  raw(&b, "detail", r->detail);
  sb_printf(&b, "}\n");
  if (b.oom)
    return PIT_ENOMEM;
  return (int)b.len;
}

/* ---------- parsing ---------- */

/* o's field k: NULL when absent or null (*rc 0: the field stays absent); NULL and *rc the error
 * "field "k" is not WHAT" when is (NULL: any kind) says it is not of its kind. */
static const cJSON *field(const cJSON *o, const char *k, cJSON_bool (*is)(const cJSON *), const char *what, int *rc,
                          struct pit_err *e) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
  *rc = 0;
  if (!it || cJSON_IsNull(it))
    return NULL;
  if (is && !is(it)) {
    *rc = pit_err_set(e, PIT_EFORMAT, "field \"%s\" is not %s", k, what);
    return NULL;
  }
  return it;
}

static int get_num(const cJSON *o, const char *k, double *out, struct pit_err *e) {
  int rc;
  const cJSON *it = field(o, k, cJSON_IsNumber, "a number", &rc, e);
  if (it)
    *out = it->valuedouble;
  return rc;
}

static int get_int(const cJSON *o, const char *k, int64_t *out, struct pit_err *e) {
  double v = NAN;
  int rc = get_num(o, k, &v, e);
  if (rc)
    return rc;
  if (isnan(v))
    return 0;
  if (v < 0 || v > 9.007199254740992e15 || v != floor(v))
    return pit_err_set(e, PIT_EFORMAT, "field \"%s\" is not a non-negative integer", k);
  *out = (int64_t)v;
  return 0;
}

static int get_str(const cJSON *o, const char *k, char *dst, size_t cap, struct pit_err *e) {
  int rc;
  const cJSON *it = field(o, k, cJSON_IsString, "a string", &rc, e);
  if (it)
    snprintf(dst, cap, "%s", it->valuestring);
  return rc;
}

static int get_bool(const cJSON *o, const char *k, int *dst, struct pit_err *e) {
  int rc;
  const cJSON *it = field(o, k, cJSON_IsBool, "true or false", &rc, e);
  if (it)
    *dst = cJSON_IsTrue(it);
  return rc;
}

/* as_json: the field's JSON text (any kind); else its string. */
static int get_dup(const cJSON *o, const char *k, char **dst, int as_json, struct pit_err *e) {
  int rc;
  const cJSON *it = field(o, k, as_json ? NULL : cJSON_IsString, "a string", &rc, e);
  if (!it)
    return rc;
  *dst = as_json ? pit_json_print(it) : strdup(it->valuestring);
  return *dst ? 0 : pit_err_set(e, PIT_ENOMEM, "out of memory");
}

static int get_arrays(const cJSON *o, struct pit_record *r, struct pit_err *e) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "compute_s");
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "wait_s");
  if (!c && !w)
    return 0;
  if ((c && !cJSON_IsArray(c)) || (w && !cJSON_IsArray(w)))
    return pit_err_set(e, PIT_EFORMAT, "\"compute_s\" and \"wait_s\" must be arrays");
  int nc = c ? cJSON_GetArraySize(c) : 0, nw = w ? cJSON_GetArraySize(w) : 0;
  if (c && w && nc != nw)
    return pit_err_set(e, PIT_EFORMAT, "\"compute_s\" has %d entries but \"wait_s\" has %d", nc, nw);
  int n = nc > nw ? nc : nw;
  if (n > 1 << 20)
    return pit_err_set(e, PIT_EFORMAT, "too many ranks (%d)", n);
  if (pit_record_set_ranks(r, n))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int pass = 0; pass < 2; pass++) {
    const cJSON *a = pass ? w : c;
    double *dst = pass ? r->wait_s : r->compute_s;
    if (!a)
      continue;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) {
      if (cJSON_IsNumber(it))
        dst[i] = it->valuedouble;
      else if (!cJSON_IsNull(it))
        return pit_err_set(e, PIT_EFORMAT, "\"%s\" holds a non-number", pass ? "wait_s" : "compute_s");
      i++;
    }
  }
  return 0;
}

/* A node record's "catalog" (its type's catalog row): every required column, each in range. */
static int get_row(const cJSON *o, struct pit_rec_itype *row, struct pit_err *e) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "catalog");
  if (!c || cJSON_IsNull(c))
    return 0;
  if (!cJSON_IsObject(c))
    return pit_err_set(e, PIT_EFORMAT, "field \"catalog\" is not an object");
  int64_t vcpus = -1, cpus = -1;
  int rc;
  if ((rc = get_int(c, "vcpus", &vcpus, e)) || (rc = get_int(c, "cpus", &cpus, e)) ||
      (rc = get_num(c, "price_h", &row->price_h, e)) || (rc = get_num(c, "spot_price_h", &row->spot_price_h, e)) ||
      (rc = get_num(c, "billing_s", &row->billing_s, e)) || (rc = get_num(c, "min_s", &row->min_s, e)) ||
      (rc = get_num(c, "cpu_quota", &row->cpu_quota, e)))
    return rc;
  if (!(vcpus >= 1 && vcpus <= 1000000) || !(row->price_h > 0) || !isfinite(row->price_h) ||
      !(row->billing_s > 0) || !isfinite(row->billing_s) || !(row->min_s >= 0) || !isfinite(row->min_s) ||
      cpus > 1000000 || !(isnan(row->spot_price_h) || row->spot_price_h > 0))
    return pit_err_set(e, PIT_EFORMAT, "field \"catalog\" lacks vcpus, price_h, billing_s or min_s, or one is out of range");
  row->vcpus = (int)vcpus;
  row->cpus = cpus < 0 ? -1 : (int)cpus;
  row->have = 1;
  return 0;
}

static int get_loss(const cJSON *o, struct pit_record *r, struct pit_err *e) {
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "loss");
  if (!l || cJSON_IsNull(l))
    return 0;
  if (cJSON_IsNumber(l)) {
    r->loss = l->valuedouble;
    return 0;
  }
  if (!cJSON_IsObject(l))
    return pit_err_set(e, PIT_EFORMAT, "field \"loss\" is neither a number nor an object");
  const cJSON *it;
  cJSON_ArrayForEach(it, l) {
    if (r->nlosses >= PIT_MAX_LOSSES)
      return pit_err_set(e, PIT_EFORMAT, "more than %d named losses", PIT_MAX_LOSSES);
    if (!cJSON_IsNumber(it) && !cJSON_IsNull(it))
      return pit_err_set(e, PIT_EFORMAT, "loss \"%s\" is not a number", it->string);
    snprintf(r->loss_name[r->nlosses], sizeof r->loss_name[0], "%s", it->string);
    r->loss_val[r->nlosses] = cJSON_IsNumber(it) ? it->valuedouble : NAN;
    r->nlosses++;
  }
  return 0;
}

int pit_record_parse(struct pit_record *r, const char *line, size_t len, struct pit_err *e) {
  pit_record_release(r);
  cJSON *o = cJSON_ParseWithLength(line, len);
  if (!o)
    return pit_err_set(e, PIT_EFORMAT, "not valid JSON");
  int rc = 0;
  if (!cJSON_IsObject(o)) {
    rc = pit_err_set(e, PIT_EFORMAT, "not a JSON object");
    goto out;
  }
  const cJSON *ty = cJSON_GetObjectItemCaseSensitive(o, "type");
  if (!cJSON_IsString(ty) || (r->type = pit_rec_type_parse(ty->valuestring)) == PIT_REC_NONE) {
    rc = pit_err_set(e, PIT_EFORMAT, "missing or unknown \"type\"");
    goto out;
  }
  int64_t gen = 0, rank = -1, ranks = -1, nodes = -1;
  char market[16] = "";
  char stop_reason[32] = ""; /* the protocol's end record: "stop": "SIGUSR1" after an agreed stop */
  if ((rc = get_str(o, "run", r->run, sizeof r->run, e)) || (rc = get_int(o, "gen", &gen, e)) ||
      (rc = get_num(o, "t", &r->t, e)) || (rc = get_int(o, "rank", &rank, e)) ||
      (rc = get_int(o, "epoch", &r->epoch, e)) || (rc = get_int(o, "iter", &r->iter, e)) ||
      (rc = get_int(o, "step", &r->step, e)) || (rc = get_int(o, "batch", &r->batch, e)) ||
      (rc = get_num(o, "step_s", &r->step_s, e)) || (rc = get_num(o, "data_s", &r->data_s, e)) ||
      (rc = get_arrays(o, r, e)) || (rc = get_loss(o, r, e)) ||
      (rc = get_num(o, "init_s", &r->init_s, e)) || (rc = get_num(o, "rdzv_s", &r->rdzv_s, e)) ||
      (rc = get_int(o, "ranks", &ranks, e)) || (rc = get_int(o, "nodes", &nodes, e)) ||
      (rc = get_dup(o, "config", &r->config, 1, e)) || (rc = get_num(o, "val_s", &r->val_s, e)) ||
      (rc = get_num(o, "ckpt_s", &r->ckpt_s, e)) || (rc = get_num(o, "epoch_s", &r->epoch_s, e)) ||
      (rc = get_num(o, "total_s", &r->total_s, e)) ||
      (rc = get_str(o, "samples_digest", r->samples, sizeof r->samples, e)) ||
      (rc = get_str(o, "stop", stop_reason, sizeof stop_reason, e)) ||
      (rc = get_str(o, "status", r->status, sizeof r->status, e)) ||
      (rc = get_num(o, "accuracy", &r->accuracy, e)) || (rc = get_dup(o, "path", &r->path, 0, e)) ||
      (rc = get_int(o, "bytes", &r->bytes, e)) ||
      (rc = get_str(o, "action", r->action, sizeof r->action, e)) ||
      (rc = get_str(o, "node", r->node, sizeof r->node, e)) ||
      (rc = get_str(o, "itype", r->itype, sizeof r->itype, e)) ||
      (rc = get_num(o, "price_h", &r->price_h, e)) || (rc = get_str(o, "market", market, sizeof market, e)) ||
      (rc = get_str(o, "zone", r->zone, sizeof r->zone, e)) || (rc = pit_market_parse(market, &r->market, e)) ||
      (rc = get_bool(o, "continued", &r->continued, e)) ||
      (rc = get_row(o, &r->row, e)) || (rc = get_dup(o, "detail", &r->detail, 1, e)))
    goto out;
  if (gen > 1000000000 || rank > 1000000000 || ranks > 1000000000 || nodes > 1000000000) {
    rc = pit_err_set(e, PIT_EFORMAT, "integer field out of range");
    goto out;
  }
  r->gen = (int)gen;
  if (r->type == PIT_REC_END && stop_reason[0] && !r->status[0])
    snprintf(r->status, sizeof r->status, "stopped");
  r->rank = (int)rank;
  r->ranks = (int)ranks;
  r->nodes = (int)nodes;
out:
  cJSON_Delete(o);
  if (rc) {
    struct pit_err keep;
    if (e)
      keep = *e;
    pit_record_release(r);
    if (e)
      *e = keep;
  }
  return rc;
}

/* ---------- sinks ---------- */

int pit_events_open(struct pit_events *ev, const char *path, struct pit_err *e) {
  return pit_events_open_mode(ev, path, 0, e);
}

/* The file cut after its last newline, when it does not end with one: the bytes cut, or < 0. */
static int64_t cut_unfinished_line(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  off_t end = lseek(fd, 0, SEEK_END), at = end;
  char buf[4096];
  int64_t cut = 0;
  while (at > 0) { /* backwards, a block at a time, to the last newline */
    size_t n = at < (off_t)sizeof buf ? (size_t)at : sizeof buf;
    if (pread(fd, buf, n, at - (off_t)n) != (ssize_t)n) {
      cut = -1;
      break;
    }
    size_t k = n;
    while (k > 0 && buf[k - 1] != '\n')
      k--;
    if (k > 0 || at == (off_t)n) {
      off_t keep = at - (off_t)n + (off_t)k;
      if (keep < end && ftruncate(fd, keep) == 0)
        cut = end - keep;
      else if (keep < end)
        cut = -1;
      break;
    }
    at -= (off_t)n;
  }
  close(fd);
  return cut;
}

int pit_events_open_mode(struct pit_events *ev, const char *path, int append, struct pit_err *e) {
  memset(ev, 0, sizeof *ev);
  if (strcmp(path, "-") == 0) {
    ev->fp = stdout;
  } else {
    if (append && (ev->dropped = cut_unfinished_line(path)) < 0)
      return pit_err_errno(e, PIT_EIO, "cannot cut the unfinished last line of '%s'", path);
    ev->fp = fopen(path, append ? "a" : "w");
    if (!ev->fp)
      return pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
    ev->owns_fp = 1;
  }
  ev->path = strdup(path);
  return ev->path ? 0 : pit_err_set(e, PIT_ENOMEM, "out of memory");
}

int pit_events_write(struct pit_events *ev, const struct pit_record *r, struct pit_err *e) {
  if (!ev->fp)
    return 0;
  int n = pit_record_format(r, &ev->buf, &ev->cap);
  if (n < 0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (fwrite(ev->buf, 1, (size_t)n, ev->fp) != (size_t)n)
    return pit_err_errno(e, PIT_EIO, "cannot write '%s'", ev->path);
  return 0;
}

int pit_events_flush(struct pit_events *ev, struct pit_err *e) {
  if (ev->fp && fflush(ev->fp) != 0)
    return pit_err_errno(e, PIT_EIO, "cannot write '%s'", ev->path);
  return 0;
}

void pit_events_release(struct pit_events *ev) {
  if (ev->fp) {
    if (ev->owns_fp)
      fclose(ev->fp);
    else
      fflush(ev->fp);
  }
  free(ev->buf);
  free(ev->path);
  memset(ev, 0, sizeof *ev);
}

/* ---------- reader ---------- */

int pit_record_reader_open(struct pit_record_reader *rd, const char *path, struct pit_err *e) {
  memset(rd, 0, sizeof *rd);
  if (strcmp(path, "-") == 0) {
    rd->fp = stdin;
  } else {
    rd->fp = fopen(path, "rb");
    if (!rd->fp)
      return pit_err_errno(e, PIT_EIO, "cannot open '%s'", path);
    rd->owns_fp = 1;
  }
  rd->path = strdup(path);
  return rd->path ? 0 : pit_err_set(e, PIT_ENOMEM, "out of memory");
}

int pit_record_reader_next(struct pit_record_reader *rd, struct pit_record *r, struct pit_err *e) {
  for (;;) {
    ssize_t n = getline(&rd->line, &rd->cap, rd->fp);
    if (n < 0) {
      if (ferror(rd->fp))
        return pit_err_errno(e, PIT_EIO, "cannot read '%s'", rd->path);
      return 0;
    }
    rd->lineno++;
    size_t len = (size_t)n;
    while (len && (rd->line[len - 1] == '\n' || rd->line[len - 1] == '\r'))
      len--;
    const char *p = rd->line;
    size_t skip = 0;
    while (skip < len && (p[skip] == ' ' || p[skip] == '\t'))
      skip++;
    if (skip == len) {
      rd->skipped++;
      continue;
    }
    if (p[skip] != '{') {
      rd->skipped++;
      continue;
    }
    struct pit_err le;
    pit_err_clear(&le);
    if (pit_record_parse(r, p + skip, len - skip, &le) != 0)
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: %s", rd->path, rd->lineno, le.msg);
    return 1;
  }
}

void pit_record_reader_release(struct pit_record_reader *rd) {
  if (rd->fp && rd->owns_fp)
    fclose(rd->fp);
  free(rd->line);
  free(rd->path);
  memset(rd, 0, sizeof *rd);
}

int pit_record_each(const char *path, pit_record_fn fn, void *ctx, struct pit_err *e) {
  struct pit_record_reader rd;
  struct pit_record r;
  int rc = pit_record_reader_open(&rd, path, e);
  if (rc < 0)
    return rc;
  pit_record_init(&r);
  while ((rc = pit_record_reader_next(&rd, &r, e)) == 1) {
    rc = fn(ctx, &r, rd.lineno, e);
    pit_record_release(&r);
    if (rc < 0)
      break;
  }
  pit_record_release(&r);
  pit_record_reader_release(&rd);
  return rc < 0 ? rc : 0;
}

/* checkpoint.c — training checkpoints: everything a run needs to continue at any
 * world size with the same sequence of global batches.
 *
 * File layout (host byte order, little-endian on every platform pitstop runs on):
 *   "PITCKPT1"                      8 bytes magic
 *   u64 header_len, header          JSON: run, gen, model, step, t, shapes, sampler
 *                                   state, and per net: nparams, nstate, optimizer
 *   u64 payload_len, payload        per net: params, state, optimizer m, optimizer v
 *                                   (v only for Adam), float32
 *   u64 checksum                    chained pit_hash64 over every byte before it, piece by
 *                                   piece as written (see verify)
 * Invariants: written through pit_atomic_open (temp file, fsync, rename, fsync
 * of the directory), so a crash leaves the previous checkpoint intact; a reader
 * (pit_ckpt_read) checks magic, lengths and checksum before touching any network.
 * An optimizer holds one m (and for Adam one v) value per parameter.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/train.h"

static const char MAGIC[8] = {'P', 'I', 'T', 'C', 'K', 'P', 'T', '1'};

struct hw { /* hashing writer */
  struct pit_atomic_file *af;
  uint64_t h;
  int64_t n;
  int err;
};

static void hw_put(struct hw *w, const void *p, size_t n) {
  if (w->err || n == 0)
    return;
  w->h = pit_hash64(p, n, w->h);
  if (pit_atomic_write(w->af, p, n) != 0)
    w->err = 1;
  w->n += (int64_t)n;
}

static void hw_u64(struct hw *w, uint64_t v) { hw_put(w, &v, sizeof v); }

static size_t net_floats(struct pit_net *net, const struct pit_optim *o) {
  const struct pit_model_spec *s = pit_net_spec(net);
  return s->nparams + s->nstate + o->n + (o->v ? o->n : 0);
}

int pit_ckpt_save(const char *path, const struct pit_ckpt_meta *m, struct pit_net *const *nets,
                  const struct pit_optim *optims, int n, int64_t *bytes, struct pit_err *e) {
  cJSON *h = cJSON_CreateObject();
  cJSON_AddStringToObject(h, "run", m->run);
  cJSON_AddStringToObject(h, "model", m->model);
  cJSON_AddNumberToObject(h, "gen", m->gen);
  cJSON_AddNumberToObject(h, "step", (double)m->step);
  cJSON_AddNumberToObject(h, "t", m->t);
  cJSON_AddNumberToObject(h, "in_c", m->in_c);
  cJSON_AddNumberToObject(h, "image_size", m->image_size);
  cJSON_AddNumberToObject(h, "classes", m->classes);
  cJSON *s = cJSON_AddObjectToObject(h, "sampler");
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)m->sampler.seed);
  cJSON_AddStringToObject(s, "seed", seed); /* a string: 64-bit exact */
  cJSON_AddNumberToObject(s, "epoch", (double)m->sampler.epoch);
  cJSON_AddNumberToObject(s, "batch", (double)m->sampler.batch);
  cJSON_AddNumberToObject(s, "global_batch", (double)m->sampler.global_batch);
  cJSON_AddNumberToObject(s, "n", (double)m->sampler.n);
  cJSON_AddNumberToObject(s, "drop_last", m->sampler.drop_last);
  cJSON *arr = cJSON_AddArrayToObject(h, "nets");
  size_t payload = 0;
  for (int i = 0; i < n; i++) {
    const struct pit_model_spec *sp = pit_net_spec(nets[i]);
    const struct pit_optim *o = &optims[i];
    cJSON *jn = cJSON_CreateObject();
    cJSON_AddStringToObject(jn, "name", sp->name);
    cJSON_AddNumberToObject(jn, "nparams", (double)sp->nparams);
    cJSON_AddNumberToObject(jn, "nstate", (double)sp->nstate);
    cJSON_AddStringToObject(jn, "optimizer", o->kind == PIT_OPT_ADAM ? "adam" : "sgd");
    cJSON_AddNumberToObject(jn, "lr", o->lr);
    cJSON_AddNumberToObject(jn, "momentum", o->momentum);
    cJSON_AddNumberToObject(jn, "beta1", o->beta1);
    cJSON_AddNumberToObject(jn, "beta2", o->beta2);
    cJSON_AddNumberToObject(jn, "opt_t", (double)o->t);
    cJSON_AddItemToArray(arr, jn);
    payload += net_floats(nets[i], o) * sizeof(float);
  }
  char *txt = pit_json_print(h);
  cJSON_Delete(h);
  if (!txt)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");

  struct pit_atomic_file af;
  int rc = pit_atomic_open(&af, path, e);
  if (rc < 0) {
    free(txt);
    return rc;
  }
  struct hw w = {&af, 0, 0, 0};
  hw_put(&w, MAGIC, sizeof MAGIC);
  hw_u64(&w, strlen(txt));
  hw_put(&w, txt, strlen(txt));
  hw_u64(&w, payload);
  for (int i = 0; i < n; i++) {
    const struct pit_model_spec *sp = pit_net_spec(nets[i]);
    const struct pit_optim *o = &optims[i];
    hw_put(&w, pit_net_params(nets[i]), sp->nparams * sizeof(float));
    hw_put(&w, pit_net_state(nets[i]), sp->nstate * sizeof(float));
    hw_put(&w, o->m, o->n * sizeof(float));
    if (o->v)
      hw_put(&w, o->v, o->n * sizeof(float));
  }
  uint64_t sum = w.h;
  if (!w.err && pit_atomic_write(&af, &sum, sizeof sum) != 0)
    w.err = 1;
  free(txt);
  if (w.err) {
    pit_atomic_abort(&af);
    return pit_err_errno(e, PIT_EIO, "cannot write checkpoint '%s'", path);
  }
  rc = pit_atomic_commit(&af, e);
  if (rc == 0 && bytes)
    *bytes = w.n + (int64_t)sizeof sum;
  return rc;
}

static int parse_header(const unsigned char *blob, size_t len, const char *path, cJSON **out,
                        size_t *payload_off, struct pit_err *e) {
  uint64_t hl;
  if (len < sizeof MAGIC + 3 * sizeof(uint64_t))
    return pit_err_set(e, PIT_EFORMAT, "'%s': truncated checkpoint", path);
  memcpy(&hl, blob + 8, 8);
  if (hl > len - sizeof MAGIC - 3 * sizeof(uint64_t))
    return pit_err_set(e, PIT_EFORMAT, "'%s': truncated checkpoint (header)", path);
  char *txt = malloc(hl + 1);
  if (!txt)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  memcpy(txt, blob + 16, hl);
  txt[hl] = 0;
  cJSON *h = cJSON_Parse(txt);
  free(txt);
  if (!cJSON_IsObject(h)) {
    cJSON_Delete(h);
    return pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint header is not a JSON object", path);
  }
  *out = h;
  *payload_off = 16 + hl + 8;
  return 0;
}

/* The checksum chained exactly as the writer hashed: magic, header_len, header,
 * payload_len, then per net the pieces params, state, optimizer m, optimizer v (Adam
 * only), each of nparams or nstate floats as the header says (an optimizer holds
 * one value per parameter); empty pieces are not hashed. Checks that the pieces
 * fill the payload exactly. Needs no network: a directory of checkpoints is
 * verified before any model is built. */
static int verify(const unsigned char *blob, size_t len, const char *path, struct pit_err *e) {
  cJSON *h = NULL;
  size_t off = 0;
  int rc = parse_header(blob, len, path, &h, &off, e);
  if (rc < 0)
    return rc;
  uint64_t hh = 0, hl, sum;
  memcpy(&hl, blob + 8, 8);
  hh = pit_hash64(blob, 8, hh);
  hh = pit_hash64(blob + 8, 8, hh);
  if (hl)
    hh = pit_hash64(blob + 16, hl, hh);
  hh = pit_hash64(blob + 16 + hl, 8, hh);
  size_t p = off;
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(h, "nets"), *jn;
  if (!cJSON_IsArray(arr))
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint header lacks \"nets\"", path);
  int i = 0;
  cJSON_ArrayForEach(jn, arr) {
    const cJSON *np = cJSON_GetObjectItemCaseSensitive(jn, "nparams");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(jn, "nstate");
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(jn, "optimizer");
    if (!cJSON_IsNumber(np) || !cJSON_IsNumber(ns) || !cJSON_IsString(ok) || np->valuedouble < 0 ||
        ns->valuedouble < 0 || np->valuedouble > 1e15 || ns->valuedouble > 1e15) {
      rc = pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint network %d lacks its sizes", path, i);
      break;
    }
    size_t np_ = (size_t)np->valuedouble, ns_ = (size_t)ns->valuedouble;
    size_t pieces[4] = {np_, ns_, np_, strcmp(ok->valuestring, "adam") == 0 ? np_ : 0};
    for (int k = 0; k < 4 && rc == 0; k++) {
      size_t b = pieces[k] * sizeof(float);
      if (b > len - 8 - p) {
        rc = pit_err_set(e, PIT_EFORMAT, "'%s': truncated checkpoint (payload)", path);
        break;
      }
      if (b)
        hh = pit_hash64(blob + p, b, hh);
      p += b;
    }
    if (rc < 0)
      break;
    i++;
  }
  cJSON_Delete(h);
  memcpy(&sum, blob + len - 8, 8);
  if (rc == 0 && p != len - 8)
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint payload size does not match its header", path);
  if (rc == 0 && hh != sum)
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint checksum mismatch (corrupted file)", path);
  return rc;
}

int pit_ckpt_read(const char *path, unsigned char **blob, size_t *len, struct pit_err *e) {
  *blob = NULL;
  *len = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return pit_err_errno(e, PIT_EIO, "cannot open checkpoint '%s'", path);
  if (fseek(fp, 0, SEEK_END) != 0) {
    fclose(fp);
    return pit_err_errno(e, PIT_EIO, "cannot read checkpoint '%s'", path);
  }
  long sz = ftell(fp);
  rewind(fp);
  if (sz < (long)(sizeof MAGIC + 3 * sizeof(uint64_t))) {
    fclose(fp);
    return pit_err_set(e, PIT_EFORMAT, "'%s': not a pitstop checkpoint (too short: %ld bytes)", path,
                       sz);
  }
  unsigned char *b = malloc((size_t)sz);
  if (!b) {
    fclose(fp);
    return pit_err_set(e, PIT_ENOMEM, "out of memory reading '%s'", path);
  }
  size_t got = fread(b, 1, (size_t)sz, fp);
  fclose(fp);
  if (got != (size_t)sz) {
    free(b);
    return pit_err_errno(e, PIT_EIO, "cannot read checkpoint '%s'", path);
  }
  if (memcmp(b, MAGIC, sizeof MAGIC) != 0) {
    free(b);
    return pit_err_set(e, PIT_EFORMAT, "'%s': not a pitstop checkpoint (bad magic)", path);
  }
  uint64_t hl, pl;
  size_t off = sizeof MAGIC;
  memcpy(&hl, b + off, 8);
  off += 8;
  if (hl > (uint64_t)sz - off - 16) {
    free(b);
    return pit_err_set(e, PIT_EFORMAT, "'%s': truncated checkpoint (header)", path);
  }
  off += hl;
  memcpy(&pl, b + off, 8);
  off += 8;
  if (pl != (uint64_t)sz - off - 8) {
    free(b);
    return pit_err_set(e, PIT_EFORMAT, "'%s': truncated checkpoint (%llu payload bytes expected, %llu present)",
                       path, (unsigned long long)pl, (unsigned long long)((uint64_t)sz - off - 8));
  }
  *blob = b;
  *len = (size_t)sz;
  int rc = verify(b, (size_t)sz, path, e);
  if (rc < 0) {
    free(b);
    *blob = NULL;
    *len = 0;
  }
  return rc;
}

static int meta_from_json(const cJSON *h, struct pit_ckpt_meta *m, const char *path, struct pit_err *e) {
  memset(m, 0, sizeof *m);
  const cJSON *v;
#define STR(key, dst)                                                                              \
  v = cJSON_GetObjectItemCaseSensitive(h, key);                                                    \
  if (!cJSON_IsString(v))                                                                          \
    return pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint header lacks \"%s\"", path, key);          \
  snprintf(dst, sizeof dst, "%s", v->valuestring);
#define NUM(obj, key, dst)                                                                         \
  v = cJSON_GetObjectItemCaseSensitive(obj, key);                                                  \
  if (!cJSON_IsNumber(v))                                                                          \
    return pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint header lacks \"%s\"", path, key);          \
  dst = v->valuedouble;
  STR("run", m->run);
  STR("model", m->model);
  double x;
  NUM(h, "gen", x) m->gen = (int)x;
  NUM(h, "step", x) m->step = (int64_t)x;
  NUM(h, "t", m->t);
  NUM(h, "in_c", x) m->in_c = (int)x;
  NUM(h, "image_size", x) m->image_size = (int)x;
  NUM(h, "classes", x) m->classes = (int)x;
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(h, "sampler");
  if (!cJSON_IsObject(s))
    return pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint header lacks \"sampler\"", path);
  v = cJSON_GetObjectItemCaseSensitive(s, "seed");
  if (!cJSON_IsString(v))
    return pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint header lacks the sampler seed", path);
  m->sampler.seed = strtoull(v->valuestring, NULL, 10);
  NUM(s, "epoch", x) m->sampler.epoch = (int64_t)x;
  NUM(s, "batch", x) m->sampler.batch = (int64_t)x;
  NUM(s, "global_batch", x) m->sampler.global_batch = (int64_t)x;
  NUM(s, "n", x) m->sampler.n = (int64_t)x;
  NUM(s, "drop_last", x) m->sampler.drop_last = (int)x;
#undef STR
#undef NUM
  return 0;
}

/* The header (*h, the caller deletes it; NULL when it does not parse) and the
 * meta it gives. */
static int header_meta(const unsigned char *blob, size_t len, const char *path, cJSON **h, size_t *off,
                       struct pit_ckpt_meta *m, struct pit_err *e) {
  int rc = parse_header(blob, len, path, h, off, e);
  return rc < 0 ? rc : meta_from_json(*h, m, path, e);
}

int pit_ckpt_peek(const unsigned char *blob, size_t len, const char *path, struct pit_ckpt_meta *m,
                  struct pit_err *e) {
  cJSON *h = NULL;
  size_t off = 0;
  int rc = header_meta(blob, len, path, &h, &off, m, e);
  cJSON_Delete(h);
  return rc;
}

int pit_ckpt_load(const unsigned char *blob, size_t len, const char *path, struct pit_ckpt_meta *m,
                  struct pit_net *const *nets, struct pit_optim *optims, int n, struct pit_err *e) {
  cJSON *h = NULL;
  size_t off = 0;
  int rc = header_meta(blob, len, path, &h, &off, m, e);
  if (!h)
    return rc;
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(h, "nets");
  if (rc == 0 && (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n))
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': checkpoint holds %d network(s), this model has %d", path,
                     cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0, n);
  /* 1. the checksum over the pieces the header declares, then those pieces against the nets here */
  if (rc == 0)
    rc = verify(blob, len, path, e);
  for (int i = 0; i < n && rc == 0; i++) {
    const struct pit_model_spec *sp = pit_net_spec(nets[i]);
    const cJSON *jn = cJSON_GetArrayItem(arr, i);
    const cJSON *np = cJSON_GetObjectItemCaseSensitive(jn, "nparams");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(jn, "nstate");
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(jn, "optimizer");
    if ((size_t)np->valuedouble != sp->nparams || (size_t)ns->valuedouble != sp->nstate) {
      rc = pit_err_set(e, PIT_EARG,
                       "'%s': checkpoint network %d has %.0f parameters, the model built here %zu "
                       "(different model, channels or image size)",
                       path, i, np->valuedouble, sp->nparams);
      break;
    }
    int adam = strcmp(ok->valuestring, "adam") == 0;
    if (adam != (optims[i].kind == PIT_OPT_ADAM)) {
      rc = pit_err_set(e, PIT_EARG, "'%s': checkpoint optimizer is %s, this run asks for %s", path,
                       ok->valuestring, optims[i].kind == PIT_OPT_ADAM ? "adam" : "sgd");
      break;
    }
    if (optims[i].n != sp->nparams)
      rc = pit_err_set(e, PIT_EARG, "'%s': network %d's optimizer holds %zu values, not one per parameter",
                       path, i, optims[i].n);
  }
  /* 2. restore */
  if (rc == 0) {
    size_t p = off;
    for (int i = 0; i < n; i++) {
      const struct pit_model_spec *sp = pit_net_spec(nets[i]);
      const cJSON *jn = cJSON_GetArrayItem(arr, i);
      struct pit_optim *o = &optims[i];
      memcpy(pit_net_params(nets[i]), blob + p, sp->nparams * sizeof(float));
      p += sp->nparams * sizeof(float);
      memcpy(pit_net_state(nets[i]), blob + p, sp->nstate * sizeof(float));
      p += sp->nstate * sizeof(float);
      memcpy(o->m, blob + p, o->n * sizeof(float));
      p += o->n * sizeof(float);
      if (o->v) {
        memcpy(o->v, blob + p, o->n * sizeof(float));
        p += o->n * sizeof(float);
      }
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(jn, "opt_t");
      o->t = cJSON_IsNumber(t) ? (int64_t)t->valuedouble : 0;
      pit_net_params_changed(nets[i]);
    }
  }
  cJSON_Delete(h);
  return rc;
}

/* safetensors.c — reads a sequential model's convolution weights from a safetensors
 * file (the format of Hugging Face's `safetensors`: 8 bytes little-endian header
 * length N, N bytes of JSON header {"name": {"dtype", "shape", "data_offsets":
 * [begin, end]}, ..., "__metadata__": {...}}, then the raw tensor bytes, offsets
 * relative to the end of the header).
 * Conv layer i of the spec takes the tensors named "i.weight" and "i.bias", with any
 * dotted prefix ("features.0.weight", "vgg19_54.0.weight"): the state_dict names of
 * torchvision's vgg19().features, whose indexes a spec built layer for layer shares.
 * Invariant: params is written only after every tensor was found with dtype F32 and
 * the layer's exact shape, and the file holds all the bytes its header promises;
 * otherwise one message names the file and what is wrong, and params is untouched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/nn.h"

#define ST_MAX_HEADER (100u << 20) /* the format's own limit on the header */

struct st_tensor {
  const cJSON *item; /* header entry */
  uint64_t begin, end;
};

/* The header entry named "<i>.<what>" (with or without a dotted prefix), or NULL. */
static const cJSON *find_tensor(const cJSON *hdr, int i, const char *what) {
  char suffix[64];
  int n = snprintf(suffix, sizeof suffix, "%d.%s", i, what);
  const cJSON *it;
  cJSON_ArrayForEach(it, hdr) {
    size_t len = strlen(it->string);
    if (len == (size_t)n && strcmp(it->string, suffix) == 0)
      return it;
    if (len > (size_t)n && it->string[len - n - 1] == '.' && strcmp(it->string + len - n, suffix) == 0)
      return it;
  }
  return NULL;
}

static void shape_text(const cJSON *shape, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  const cJSON *d;
  cJSON_ArrayForEach(d, shape) {
    if (k < n)
      k += (size_t)snprintf(buf + k, n - k, "%s%.0f", k > 1 ? ", " : "", d->valuedouble);
  }
  if (k < n)
    snprintf(buf + k, n - k, "]");
}

/* Checks one tensor against the wanted shape (nd dims) and the file's data size. */
static int check_tensor(const char *path, const cJSON *it, const int64_t *want, int nd,
                        uint64_t data_len, struct st_tensor *t, struct pit_err *e) {
  const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(it, "dtype");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(it, "shape");
  const cJSON *offs = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
  if (!cJSON_IsString(dtype) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs) ||
      cJSON_GetArraySize(offs) != 2)
    return pit_err_set(e, PIT_EFORMAT, "'%s': tensor '%s' lacks dtype, shape or data_offsets", path,
                       it->string);
  if (strcmp(dtype->valuestring, "F32") != 0)
    return pit_err_set(e, PIT_EFORMAT, "'%s': tensor '%s' is %s; pitstop reads F32 weights", path,
                       it->string, dtype->valuestring);
  char have[128], wanted[128];
  shape_text(shape, have, sizeof have);
  int k = (size_t)snprintf(wanted, sizeof wanted, "[");
  for (int d = 0; d < nd; d++)
    k += snprintf(wanted + k, sizeof wanted - (size_t)k, "%s%lld", d ? ", " : "", (long long)want[d]);
  snprintf(wanted + k, sizeof wanted - (size_t)k, "]");
  int same = cJSON_GetArraySize(shape) == nd;
  for (int d = 0; same && d < nd; d++) {
    const cJSON *v = cJSON_GetArrayItem(shape, d);
    same = cJSON_IsNumber(v) && v->valuedouble == (double)want[d];
  }
  if (!same)
    return pit_err_set(e, PIT_EFORMAT, "'%s': tensor '%s' has shape %s, the model wants %s", path,
                       it->string, have, wanted);
  const cJSON *b = cJSON_GetArrayItem(offs, 0), *en = cJSON_GetArrayItem(offs, 1);
  uint64_t count = 1;
  for (int d = 0; d < nd; d++)
    count *= (uint64_t)want[d];
  if (!cJSON_IsNumber(b) || !cJSON_IsNumber(en) || b->valuedouble < 0 ||
      en->valuedouble - b->valuedouble != (double)(count * 4))
    return pit_err_set(e, PIT_EFORMAT, "'%s': tensor '%s' has data_offsets that do not span %s floats",
                       path, it->string, wanted);
  t->item = it;
  t->begin = (uint64_t)b->valuedouble;
  t->end = (uint64_t)en->valuedouble;
  if (t->end > data_len)
    return pit_err_set(e, PIT_EFORMAT,
                       "'%s' is truncated: tensor '%s' ends at byte %llu of the data, which has %llu",
                       path, it->string, (unsigned long long)t->end, (unsigned long long)data_len);
  return 0;
}

int pit_safetensors_load(const char *path, const struct pit_model_spec *m, float *params,
                         struct pit_err *e) {
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return pit_err_errno(e, errno == ENOENT ? PIT_ENOTFOUND : PIT_EIO, "cannot open '%s'", path);
  int rc = 0;
  char *hdr_text = NULL;
  cJSON *hdr = NULL;
  float *staged = NULL;
  struct st_tensor *ts = NULL;
  unsigned char len8[8];
  long fsize = -1;
  if (fseek(fp, 0, SEEK_END) == 0)
    fsize = ftell(fp);
  rewind(fp);
  if (fsize < 8 || fread(len8, 1, 8, fp) != 8) {
    rc = pit_err_set(e, PIT_EFORMAT, "'%s' is not a safetensors file (shorter than 8 bytes)", path);
    goto out;
  }
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--)
    hlen = hlen << 8 | len8[i];
  if (hlen > ST_MAX_HEADER || hlen + 8 > (uint64_t)fsize) {
    rc = pit_err_set(e, PIT_EFORMAT,
                     "'%s' is truncated or not a safetensors file: its header claims %llu bytes, the "
                     "file has %ld",
                     path, (unsigned long long)hlen, fsize);
    goto out;
  }
  hdr_text = malloc(hlen + 1);
  if (!hdr_text) {
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory reading '%s'", path);
    goto out;
  }
  if (fread(hdr_text, 1, hlen, fp) != hlen) {
    rc = pit_err_errno(e, PIT_EIO, "cannot read '%s'", path);
    goto out;
  }
  hdr_text[hlen] = 0;
  hdr = cJSON_Parse(hdr_text);
  if (!cJSON_IsObject(hdr)) {
    rc = pit_err_set(e, PIT_EFORMAT, "'%s': the safetensors header is not a JSON object", path);
    goto out;
  }
  const uint64_t data_len = (uint64_t)fsize - 8 - hlen;
  staged = malloc((m->nparams + 1) * sizeof(float));
  ts = calloc(2 * (size_t)(m->n + 1), sizeof *ts);
  if (!staged || !ts) {
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory reading '%s'", path);
    goto out;
  }
  for (int i = 0; i < m->n && !rc; i++) {
    const struct pit_layer_spec *L = &m->layer[i];
    if (L->w_len == 0)
      continue;
    if (L->kind != PIT_L_CONV) {
      rc = pit_err_set(e, PIT_EARG, "model '%s' layer %d: safetensors loading reads conv layers only",
                       m->name, i + 1);
      break;
    }
    const int64_t wshape[4] = {L->out_c, L->in_c, L->k, L->k}, bshape[1] = {L->out_c};
    for (int part = 0; part < (L->b_len ? 2 : 1) && !rc; part++) {
      const char *what = part ? "bias" : "weight";
      const cJSON *it = find_tensor(hdr, i, what);
      if (!it) {
        rc = pit_err_set(e, PIT_EFORMAT, "'%s' holds no tensor '%d.%s' (layer %d of %s, a conv %d→%d)",
                         path, i, what, i + 1, m->name, L->in_c, L->out_c);
        break;
      }
      struct st_tensor *t = &ts[2 * i + part];
      if ((rc = check_tensor(path, it, part ? bshape : wshape, part ? 1 : 4, data_len, t, e)))
        break;
      size_t off = part ? L->b_off : L->w_off, n = part ? L->b_len : L->w_len;
      if (fseek(fp, (long)(8 + hlen + t->begin), SEEK_SET) != 0 ||
          fread(staged + off, sizeof(float), n, fp) != n)
        rc = pit_err_errno(e, PIT_EIO, "cannot read tensor '%s' of '%s'", it->string, path);
    }
  }
  if (!rc) /* all or nothing */
    for (int i = 0; i < m->n; i++) {
      const struct pit_layer_spec *L = &m->layer[i];
      if (L->kind == PIT_L_CONV)
        memcpy(params + L->w_off, staged + L->w_off, (L->w_len + L->b_len) * sizeof(float));
    }
out:
  fclose(fp);
  free(hdr_text);
  cJSON_Delete(hdr);
  free(staged);
  free(ts);
  return rc;
}

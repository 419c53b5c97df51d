/* test_safetensors.c — pit_safetensors_load on files this test writes: conv weights
 * and biases land at their layer's offsets (bare and prefixed names, extra tensors
 * and __metadata__ ignored); a wrong shape, another dtype, a missing tensor, a
 * truncated file, a header longer than the file, a file shorter than 8 bytes and a
 * missing file each fail with one message naming the file and the tensor, and leave
 * the parameters untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "pitstop/nn.h"

static char dir[] = "/tmp/pit_st_XXXXXX";

/* Writes a safetensors file: header JSON, then `data` (n floats), cut to keep bytes
 * of data (-1: all). Returns the path (static buffer). */
static const char *write_st(const char *name, const char *header, const float *data, size_t n,
                            long keep) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  unsigned long long len = strlen(header);
  unsigned char l8[8];
  for (int i = 0; i < 8; i++)
    l8[i] = (unsigned char)(len >> (8 * i));
  fwrite(l8, 1, 8, f);
  fwrite(header, 1, len, f);
  size_t bytes = n * sizeof(float);
  fwrite(data, 1, keep >= 0 && (size_t)keep < bytes ? (size_t)keep : bytes, f);
  fclose(f);
  return path;
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  /* conv(3, 2→3, bias), relu, conv(1, 3→1, no bias): torchvision-like indexes 0 and 2 */
  struct pit_model_spec m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "st");
  m.n = 3;
  m.layer[0] = (struct pit_layer_spec){.kind = PIT_L_CONV, .out_c = 3, .k = 3, .stride = 1, .pad = 1, .bias = 1};
  m.layer[1] = (struct pit_layer_spec){.kind = PIT_L_RELU};
  m.layer[2] = (struct pit_layer_spec){.kind = PIT_L_CONV, .out_c = 1, .k = 1, .stride = 1};
  struct pit_err e = {0};
  CHECK(pit_model_spec_finish(&m, 2, 4, 4, &e) == 0, "%s", e.msg);
  CHECK(m.nparams == 54 + 3 + 3, "nparams %zu", m.nparams);
  float data[64];
  for (int i = 0; i < 64; i++)
    data[i] = (float)i + 0.5f;
  float *p = malloc(sizeof(float) * m.nparams);
  /* data: 2.bias-less weight first (3 floats), then 0.weight (54), then 0.bias (3) */
  const char *good =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"features.2.weight\":{\"dtype\":\"F32\",\"shape\":[1,3,1,1],\"data_offsets\":[0,12]},"
      "\"features.0.weight\":{\"dtype\":\"F32\",\"shape\":[2,3,3,3],\"data_offsets\":[12,228]},"
      "\"features.0.bias\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[228,240]},"
      "\"features.10.weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[240,244]}}";
  /* shape [2,3,3,3] is wrong: O=3, I=2 → [3,2,3,3] */
  const char *path = write_st("wrongshape.safetensors", good, data, 61, -1);
  for (size_t i = 0; i < m.nparams; i++)
    p[i] = -1.0f;
  CHECK(pit_safetensors_load(path, &m, p, &e) == PIT_EFORMAT, "wrong shape accepted");
  CHECK(strstr(e.msg, "wrongshape.safetensors") && strstr(e.msg, "features.0.weight") &&
            strstr(e.msg, "[2, 3, 3, 3]") && strstr(e.msg, "[3, 2, 3, 3]"),
        "message: %s", e.msg);
  CHECK(p[0] == -1.0f && p[m.nparams - 1] == -1.0f, "params touched by a failed load");

  const char *ok =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"features.2.weight\":{\"dtype\":\"F32\",\"shape\":[1,3,1,1],\"data_offsets\":[0,12]},"
      "\"features.0.weight\":{\"dtype\":\"F32\",\"shape\":[3,2,3,3],\"data_offsets\":[12,228]},"
      "\"features.0.bias\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[228,240]},"
      "\"features.10.weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[240,244]}}";
  path = write_st("ok.safetensors", ok, data, 61, -1);
  CHECK(pit_safetensors_load(path, &m, p, &e) == 0, "load: %s", e.msg);
  CHECK(p[m.layer[0].w_off] == 3.5f && p[m.layer[0].w_off + 53] == 56.5f, "0.weight misplaced");
  CHECK(p[m.layer[0].b_off] == 57.5f && p[m.layer[0].b_off + 2] == 59.5f, "0.bias misplaced");
  CHECK(p[m.layer[2].w_off] == 0.5f && p[m.layer[2].w_off + 2] == 2.5f, "2.weight misplaced");

  /* bare names */
  const char *bare =
      "{\"0.weight\":{\"dtype\":\"F32\",\"shape\":[3,2,3,3],\"data_offsets\":[0,216]},"
      "\"0.bias\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[216,228]},"
      "\"2.weight\":{\"dtype\":\"F32\",\"shape\":[1,3,1,1],\"data_offsets\":[228,240]}}";
  path = write_st("bare.safetensors", bare, data, 60, -1);
  CHECK(pit_safetensors_load(path, &m, p, &e) == 0, "bare names: %s", e.msg);
  CHECK(p[m.layer[2].w_off] == 57.5f, "bare 2.weight misplaced");

  /* truncated: the data stops inside 2.weight */
  path = write_st("cut.safetensors", bare, data, 60, 230);
  for (size_t i = 0; i < m.nparams; i++)
    p[i] = -1.0f;
  CHECK(pit_safetensors_load(path, &m, p, &e) == PIT_EFORMAT, "truncated file accepted");
  CHECK(strstr(e.msg, "truncated") && strstr(e.msg, "2.weight") && strstr(e.msg, "cut.safetensors"),
        "message: %s", e.msg);
  CHECK(p[0] == -1.0f, "params touched by a truncated load");

  /* missing tensor, other dtype */
  const char *missing = "{\"0.weight\":{\"dtype\":\"F32\",\"shape\":[3,2,3,3],\"data_offsets\":[0,216]}}";
  path = write_st("missing.safetensors", missing, data, 54, -1);
  CHECK(pit_safetensors_load(path, &m, p, &e) == PIT_EFORMAT, "missing bias accepted");
  CHECK(strstr(e.msg, "0.bias") != NULL, "message: %s", e.msg);
  const char *f16 = "{\"0.weight\":{\"dtype\":\"F16\",\"shape\":[3,2,3,3],\"data_offsets\":[0,108]}}";
  path = write_st("f16.safetensors", f16, data, 27, -1);
  CHECK(pit_safetensors_load(path, &m, p, &e) == PIT_EFORMAT && strstr(e.msg, "F16"), "F16: %s", e.msg);

  /* header longer than the file; tiny file; no file */
  char hp[256];
  snprintf(hp, sizeof hp, "%s/short.safetensors", dir);
  FILE *f = fopen(hp, "wb");
  unsigned char big[12] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}', 0, 0};
  fwrite(big, 1, sizeof big, f);
  fclose(f);
  CHECK(pit_safetensors_load(hp, &m, p, &e) == PIT_EFORMAT && strstr(e.msg, "truncated"), "header: %s", e.msg);
  f = fopen(hp, "wb");
  fwrite(big, 1, 5, f);
  fclose(f);
  CHECK(pit_safetensors_load(hp, &m, p, &e) == PIT_EFORMAT, "5-byte file: %s", e.msg);
  snprintf(hp, sizeof hp, "%s/none.safetensors", dir);
  CHECK(pit_safetensors_load(hp, &m, p, &e) == PIT_ENOTFOUND && strstr(e.msg, "none.safetensors"),
        "missing file: %s", e.msg);
  CHECK(p[0] == -1.0f, "params touched by failed loads");
  free(p);
  static const char *const made[] = {"wrongshape", "ok", "bare", "cut", "missing", "f16", "short"};
  for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
    snprintf(hp, sizeof hp, "%s/%s.safetensors", dir, made[i]);
    unlink(hp);
  }
  rmdir(dir);
  return check_done();
}

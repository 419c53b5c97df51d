/* synthetic.c — a generated, labelled dataset of any shape, for benchmarks and
 * tests that must not wait for real data.
 *
 * Sample i of a split is a deterministic function of (seed, split, i):
 *   label  = stream(key_label, i) mod classes
 *   x[k]   = clamp(a · T[label][k] + b + N[off + k], -1, 1)
 * where T are `classes` fixed templates (an oriented sinusoid with a class-
 * dependent frequency, orientation and per-channel phase, plus a Gaussian blob at
 * a class-dependent place), drawn once from the seed and shared by both splits;
 * N is a fixed table of uniform noise in [-0.45, 0.45]; and off, contrast
 * a ∈ [0.7, 1] and brightness b ∈ [-0.15, 0.15] come from one hash of
 * (seed, split, i). The train and test splits use different hash streams, so
 * test samples are new samples of the same classes: a model can learn the
 * templates and generalise. Values are already in [-1, 1] (pixels in [0, 1]
 * normalised with mean 0.5, std 0.5, for classifiers and GANs alike).
 *
 * Nothing is stored per sample except labels (x is NULL); gather generates a
 * sample with one hash and one pass over (C·H·W) floats.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_impl.h"

#define NOISE (1 << 16)

struct synth {
  int classes;
  size_t per;        /* c·h·w */
  uint64_t key_smp, key_lab;
  float *templ;      /* (classes, c, h, w) */
  float *noise;      /* (NOISE + per) */
};

static double unit(uint64_t key, uint64_t k) { return (pit__stream(key, k) >> 11) * 0x1.0p-53; }

static void make_template(float *t, int k, int classes, int c, int h, int w, uint64_t key) {
  const double pi = 3.14159265358979323846;
  double theta = pi * (k + 0.5 * unit(key, 8 * k)) / classes;
  double freq = 1.0 + (k % 4) + unit(key, 8 * k + 1);
  double bx = 0.15 + 0.7 * unit(key, 8 * k + 2), by = 0.15 + 0.7 * unit(key, 8 * k + 3);
  for (int ch = 0; ch < c; ch++) {
    double phase = 2 * pi * unit(key, 8 * k + 4 + (ch % 4));
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double u = (x + 0.5) / w, v = (y + 0.5) / h;
        double wave = sin(2 * pi * freq * (cos(theta) * u + sin(theta) * v) + phase);
        double d2 = (u - bx) * (u - bx) + (v - by) * (v - by);
        t[((size_t)ch * h + y) * w + x] = (float)(0.45 * wave + 0.5 * exp(-d2 / 0.02) - 0.1);
      }
  }
}

static int32_t label_of(const struct synth *s, int64_t i) {
  return (int32_t)(pit__stream(s->key_lab, (uint64_t)i) % (uint64_t)s->classes);
}

int pit__synth_load(struct pit_dataset *ds, const struct pit_data_opts *o, struct pit_err *e) {
  int c = o->channels ? o->channels : 3, size = o->image_size ? o->image_size : 32;
  int64_t n = o->synth_n ? o->synth_n : o->train ? 50000 : 10000;
  if (o->limit > 0 && o->limit < n)
    n = o->limit;
  struct synth *s = calloc(1, sizeof *s);
  if (!s)
    return pit_err_set(e, PIT_ENOMEM, "out of memory for the synthetic dataset");
  ds->priv = s;
  s->classes = o->synth_classes ? o->synth_classes : 10;
  s->per = (size_t)c * size * size;
  s->key_smp = pit__key(o->seed, o->train ? 1 : 2);
  s->key_lab = pit__key(o->seed, o->train ? 3 : 4);
  s->templ = malloc(sizeof(float) * s->per * (size_t)s->classes);
  s->noise = malloc(sizeof(float) * (s->per + NOISE));
  ds->y = malloc(sizeof(int32_t) * (size_t)n);
  if (!s->templ || !s->noise || !ds->y)
    return pit_err_set(e, PIT_ENOMEM, "out of memory for the synthetic dataset (%lld samples of "
                       "%dx%dx%d, %d classes)", (long long)n, c, size, size, s->classes);
  uint64_t kt = pit__key(o->seed, 5), kn = pit__key(o->seed, 6);
  for (int k = 0; k < s->classes; k++)
    make_template(s->templ + (size_t)k * s->per, k, s->classes, c, size, size, kt);
  for (size_t k = 0; k < s->per + NOISE; k++)
    s->noise[k] = (float)(0.9 * unit(kn, k) - 0.45);
  for (int64_t i = 0; i < n; i++)
    ds->y[i] = label_of(s, i);
  ds->n = n;
  ds->c = c;
  ds->h = ds->w = size;
  ds->classes = s->classes;
  ds->synth_seed = o->seed;
  return 0;
}

void pit__synth_release(struct pit_dataset *ds) {
  struct synth *s = ds->priv;
  if (!s)
    return;
  PIT_FREE_ALL(s->templ, s->noise, s);
  ds->priv = NULL;
}

void pit__synth_gather(const struct pit_dataset *ds, const int64_t *idx, int n, float *x,
                       int32_t *y) {
  const struct synth *s = ds->priv;
  for (int i = 0; i < n; i++) {
    uint64_t h = pit__stream(s->key_smp, (uint64_t)idx[i]);
    int32_t lab = label_of(s, idx[i]);
    const float *t = s->templ + (size_t)lab * s->per;
    const float *nz = s->noise + (h & (NOISE - 1));
    float a = 0.7f + 0.3f * (float)((h >> 16) & 0xffff) / 65535.0f;
    float b = 0.3f * ((float)((h >> 32) & 0xffff) / 65535.0f - 0.5f);
    float *d = x + (size_t)i * s->per;
    for (size_t k = 0; k < s->per; k++) {
      float v = a * t[k] + b + nz[k];
      d[k] = v < -1.0f ? -1.0f : v > 1.0f ? 1.0f : v;
    }
    if (y)
      y[i] = lab;
  }
}

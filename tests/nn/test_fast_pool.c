/* test_fast_pool.c — the dispatched versions of the fast backend's max pooling
 * (src/nn/fast_pool.c: plain C, AVX2, AVX-512) give bitwise the same outputs, window
 * indices and input gradients, for every channel block (1, 8, 16), with and without
 * the fused ReLU, tiled, overlapping and strided-past-the-edge windows, on inputs full
 * of ties, signed zeros and NaNs of several payloads; each version the CPU can run is
 * compared against the plain one (outputs and indices bit for bit, NaN payloads
 * included; dx too, but for the payload of a sum of two NaNs: same_bits). Also: PIT_ISA caps the dispatch choice (isa.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/fast_impl.h"
#include "pitstop/nn.h"

static float draw(struct pit_rng *r) {
  static const uint32_t nans[] = {0x7fc00000u, 0xffc00001u, 0x7fa00abcu, 0x7f800001u};
  uint64_t u = pit_rng_next(r);
  switch (u % 8) {
  case 0: { /* NaN of some payload and sign (quiet and signalling) */
    uint32_t b = nans[(u >> 8) % 4];
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
  }
  case 1:
    return (u >> 8) & 1 ? -0.0f : 0.0f;
  case 2:
  case 3: /* few distinct values: ties */
    return (float)((int)((u >> 8) % 5) - 2);
  default:
    return (float)pit_rng_normal(r);
  }
}

/* Bitwise equal, except that a NaN equals any NaN: where two NaNs meet in the
 * gradient sum of overlapping windows, which payload survives depends on the operand
 * order the compiler gives a commutative add (x86 keeps the first operand's). */
static int same_bits(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(isnan(a[i]) && isnan(b[i])))
      return 0;
  return 1;
}

static void run(const struct pit_fast_pool *shape, struct pit_rng *r) {
  struct pit_fast_pool p = *shape;
  const size_t in = (size_t)p.n * p.cb * p.h * p.w * p.blk, out = (size_t)p.n * p.cb * p.oh * p.ow * p.blk;
  float *x = malloc(in * sizeof *x), *dy = malloc(out * sizeof *dy);
  float *y[3], *dx[3];
  uint8_t *idx[3];
  for (size_t i = 0; i < in; i++)
    x[i] = draw(r);
  for (size_t i = 0; i < out; i++)
    dy[i] = draw(r);
  for (int v = 0; v < 3; v++) {
    y[v] = malloc(out * sizeof(float));
    idx[v] = malloc(out);
    dx[v] = malloc(in * sizeof(float));
    memset(dx[v], 0x5a, in * sizeof(float)); /* every element must be written */
  }
  int ran = 0;
  for (int v = PIT_ISA_PLAIN; v <= PIT_ISA_AVX512; v++) {
    if (!pit_fast_isa_supported((enum pit_isa)v))
      continue;
    p.isa = (enum pit_isa)v;
    pit_fast_pool_fwd(&p, x, y[v], idx[v]);
    pit_fast_pool_bwd(&p, dy, idx[v], dx[v]);
    ran++;
    if (v == PIT_ISA_PLAIN)
      continue;
    const char *name = pit_nn_isa_name((enum pit_isa)v);
    CHECK(memcmp(y[v], y[0], out * sizeof(float)) == 0, "%s, blk %d k %d s %d relu %d %dx%d: outputs differ",
          name, p.blk, p.k, p.s, p.relu, p.h, p.w);
    CHECK(memcmp(idx[v], idx[0], out) == 0, "%s, blk %d k %d s %d relu %d: indices differ", name, p.blk, p.k,
          p.s, p.relu);
    CHECK(same_bits(dx[v], dx[0], in), "%s, blk %d k %d s %d relu %d: dx differs", name,
          p.blk, p.k, p.s, p.relu);
  }
  CHECK(ran >= 1, "no version ran");
  /* the plain version itself: a NaN in a window gives NaN out; relu output >= 0 or NaN */
  for (size_t i = 0; i < out; i++)
    CHECK(!p.relu || isnan(y[0][i]) || y[0][i] >= 0.0f, "relu output %g", y[0][i]);
  for (int v = 0; v < 3; v++) {
    free(y[v]);
    free(idx[v]);
    free(dx[v]);
  }
  free(x);
  free(dy);
}

int main(void) {
  struct pit_rng r;
  pit_rng_seed(&r, 11);
  static const int win[][4] = {/* h, w, k, s */ {8, 8, 2, 2}, {9, 7, 2, 2}, {11, 10, 3, 2},
                               {6, 5, 3, 1}, {13, 13, 3, 3}, {5, 9, 1, 2}};
  static const int blks[] = {1, 8, 16};
  for (size_t b = 0; b < sizeof blks / sizeof blks[0]; b++)
    for (size_t w = 0; w < sizeof win / sizeof win[0]; w++)
      for (int relu = 0; relu < 2; relu++) {
        const int h = win[w][0], wd = win[w][1], k = win[w][2], s = win[w][3];
        struct pit_fast_pool p = {.n = 2, .cb = 3, .blk = blks[b], .h = h, .w = wd, .k = k, .s = s,
                                  .oh = (h - k) / s + 1, .ow = (wd - k) / s + 1, .relu = relu};
        for (int rep = 0; rep < 4; rep++)
          run(&p, &r);
      }
  /* the dispatch choice: never above the CPU or oneDNN's ISA, and PIT_ISA caps it */
  setenv("PIT_ISA", "avx2", 1);
  enum pit_isa best = pit_fast_isa_supported(PIT_ISA_AVX512) ? PIT_ISA_AVX512
                      : pit_fast_isa_supported(PIT_ISA_AVX2) ? PIT_ISA_AVX2
                                                               : PIT_ISA_PLAIN;
  const char *dn = pit_nn_dnnl_isa();
  enum pit_isa dl = strncmp(dn, "avx512", 6) == 0 ? PIT_ISA_AVX512
                    : strncmp(dn, "avx2", 4) == 0 ? PIT_ISA_AVX2
                                                  : PIT_ISA_PLAIN;
  enum pit_isa want = best < dl ? best : dl;
  if (want > PIT_ISA_AVX2)
    want = PIT_ISA_AVX2;
  CHECK(pit_nn_isa() == want, "PIT_ISA=avx2 on a CPU with %s, oneDNN %s: chose %s", pit_nn_isa_name(best), dn,
        pit_nn_isa_name(pit_nn_isa()));
  printf("versions compared: plain%s%s; dispatch: %s (oneDNN %s)\n",
         pit_fast_isa_supported(PIT_ISA_AVX2) ? ", avx2" : "",
         pit_fast_isa_supported(PIT_ISA_AVX512) ? ", avx512" : "", pit_nn_isa_name(pit_nn_isa()), dn);
  return check_done();
}

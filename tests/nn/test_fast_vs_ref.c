// ctest: slow
/* test_fast_vs_ref.c — the FAST backend against the REFERENCE backend: for every
 * built-in model, both nets get identical parameters, inputs and output gradients;
 * forward outputs (train and eval), dx, parameter gradients (accumulated twice),
 * and BatchNorm running stats must agree to a relative tolerance, at two batch
 * sizes in a row on the same nets and back again (plan cache per batch size).
 * Kink ties: a pre-activation within rounding of a ReLU/LeakyReLU kink legitimately
 * takes the other slope in one backend, and the gradients then differ by far more than
 * rounding (DCGAN-D, init seed 7: forward agrees to 1e-6, one flipped element moves dx
 * by 1e-2; ESRGAN's D at batch 2 under ONEDNN_MAX_CPU_ISA=AVX2: one of 65536 inputs of
 * its 3rd LeakyReLU is -3.6e-7 in the reference and +2.2e-8 in oneDNN's avx2 kernels,
 * whose forward differs by up to 5e-6 there: dx 9.9e-4, parameter gradients 6.3e-4,
 * issue 25). Which element ties depends on the kernels' summation order, so on the
 * ISA: no fixed input avoids every tie on every CPU (with ~1e5 pre-activations of unit
 * scale and forward differences of ~1e-6, some lie that close to 0). So a case whose
 * comparison fails is checked for a tie (kink_tie: the net cut before each activation,
 * both backends, an element whose sign differs while the reference's value is within
 * the forward tolerance of 0); a tie, and only a tie, draws new inputs (at most twice)
 * and says so. A failure without a tie is reported as it is.
 * Tolerance TOL = 1e-4 of the tensor's largest element, from float32 rounding
 * (u = 2^-24 = 6e-8): each output element of a layer is a sum of K products (K = C·k²
 * in a convolution, up to 512·9 = 4608 in VGG's conv5; a weight gradient sums B·H·W
 * products, up to 4·64·64 = 16384); oneDNN and the reference sum in different orders
 * (blocked lanes, other loop nests), and with rounding errors of random sign such a sum
 * differs by about sqrt(K)·u·Σ|products| ≲ 128·6e-8 = 8e-6 of its scale; over up to 35
 * layers the differences add with random signs (×sqrt(35) ≈ 6: 5e-5), and the largest
 * elements here are ~1-2x the sums' Σ|products| (a condition factor of about 2 for these
 * unit-scale nets): 1e-4. Measured worst (dx and gradients, all cases, at AVX-512 and
 * at AVX2): printed at the end. Winograd F(4x4, 3x3) (esrgan D at batch 4, the hr-64
 * RRDB) transforms inputs and filters with coefficients up to ~4-10 (its error grows
 * ~10-100x over direct), and passes within 1e-4 here; it runs only on AVX-512
 * (oneDNN 2.6 has no AVX2 Winograd kernel: the AVX2 copy of this test runs direct). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/nn.h"

static const double TOL = 1e-4;

/* max |a-b| relative to max |b| (the whole tensor's scale). */
static double rel_err(const float *a, const float *b, size_t n) {
  double d = 0, s = 0;
  for (size_t i = 0; i < n; i++) {
    double x = fabs((double)a[i] - b[i]);
    if (!(x <= d)) /* also catches NaN */
      d = x;
    if (fabs(b[i]) > s)
      s = fabs(b[i]);
  }
  return d / (s > 1e-30 ? s : 1e-30);
}

static void fill(float *v, size_t n, struct pit_rng *r, double scale) {
  for (size_t i = 0; i < n; i++)
    v[i] = (float)(scale * pit_rng_normal(r));
}

/* The failures of the current attempt of a case (run_case decides whether a kink tie
 * explains them before reporting), and the worst error seen (printed at the end). */
static char fails[4096];
static int nfail;
static double worst, try_worst; /* all cases; this attempt */
static char worst_what[160], try_what[160];

static void compare(const char *what, const char *model, int batch, const float *a, const float *b,
                    size_t n) {
  double err = rel_err(a, b, n);
  if (err > try_worst || err != err) {
    try_worst = err;
    snprintf(try_what, sizeof try_what, "%s, batch %d: %s", model, batch, what);
  }
  if (!(err <= TOL)) {
    size_t at = strlen(fails);
    snprintf(fails + at, sizeof fails - at, "%s, batch %d: %s differs, relative error %.3g\n", model, batch,
             what, err);
    nfail++;
  }
}

/* A kink tie of spec m with parameters params on input x (batch B): for each ReLU /
 * LeakyReLU layer k, the net cut before k runs (train forward) on both backends; an
 * element whose sign differs while |reference| <= TOL of the tensor's largest is a
 * tie. Layers inside an RRDB are not visible; cuts that split a skip pair are skipped.
 * Returns 1 and describes the first tie in msg. */
static int kink_tie(const struct pit_model_spec *m, const float *params, const float *x, int B, char *msg,
                    size_t msgn) {
  struct pit_err e = {0};
  for (int k = 1; k < m->n; k++) {
    if (m->layer[k].kind != PIT_L_RELU && m->layer[k].kind != PIT_L_LEAKYRELU)
      continue;
    struct pit_model_spec t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "cut");
    t.batch_kernels = m->batch_kernels;
    for (int i = 0; i < k; i++) {
      t.layer[i] = m->layer[i];
      t.layer[i].pair = 0;
    }
    t.n = k;
    if (pit_model_spec_finish(&t, m->in_c, m->in_h, m->in_w, &e) != 0)
      continue;
    struct pit_net *n[2] = {NULL, NULL};
    const float *y[2] = {NULL, NULL};
    int ok = 1;
    for (int b = 0; b < 2 && ok; b++) {
      ok = pit_net_create(&n[b], &t, B, b ? PIT_BACKEND_FAST : PIT_BACKEND_REF, &e) == 0;
      if (ok) {
        memcpy(pit_net_params(n[b]), params, t.nparams * sizeof(float));
        pit_init_state(&t, pit_net_state(n[b]));
        pit_net_params_changed(n[b]);
        ok = pit_net_forward(n[b], x, B, 1, &y[b], &e) == 0;
      }
    }
    int found = 0;
    if (ok) {
      size_t len = (size_t)B * t.out_c * t.out_h * t.out_w;
      double s = 0;
      for (size_t i = 0; i < len; i++)
        s = fabs(y[0][i]) > s ? fabs(y[0][i]) : s;
      for (size_t i = 0; i < len && !found; i++)
        if ((y[0][i] > 0) != (y[1][i] > 0) && fabs(y[0][i]) <= TOL * s) {
          snprintf(msg, msgn, "input %zu of layer %d: reference %.3g, fast %.3g", i, k, y[0][i], y[1][i]);
          found = 1;
        }
    }
    pit_net_free(n[0]);
    pit_net_free(n[1]);
    if (found)
      return 1;
  }
  return 0;
}

/* One attempt at a case: both backends, batches b1, b2, b1, inputs from seed; failed
 * comparisons go to fails; *tie describes a kink tie behind them, if any. */
static void run_once(const char *label, const struct pit_model_spec *m, int b1, int b2, int dcgan, uint64_t seed,
                     char *tie, size_t tien) {
  struct pit_err e = {0};
  struct pit_net *ref = NULL, *fast = NULL;
  int maxb = b1 > b2 ? b1 : b2;
  int rc = pit_net_create(&ref, m, maxb, PIT_BACKEND_REF, &e);
  CHECK(rc == 0, "%s: ref create: %s", label, e.msg);
  rc = pit_net_create(&fast, m, maxb, PIT_BACKEND_FAST, &e);
  CHECK(rc == 0, "%s: fast create: %s", label, e.msg);
  if (!ref || !fast) {
    pit_net_free(ref);
    pit_net_free(fast);
    return;
  }
  if (dcgan)
    pit_init_dcgan(m, pit_net_params(ref), 1);
  else
    pit_init_default(m, pit_net_params(ref), 1);
  memcpy(pit_net_params(fast), pit_net_params(ref), m->nparams * sizeof(float));
  pit_net_params_changed(fast);
  pit_net_params_changed(ref);
  size_t in_n = (size_t)m->in_c * m->in_h * m->in_w, out_n = (size_t)m->out_c * m->out_h * m->out_w;
  float *x = malloc(maxb * in_n * sizeof(float)), *dy = malloc(maxb * out_n * sizeof(float));
  float *dxr = malloc(maxb * in_n * sizeof(float)), *dxf = malloc(maxb * in_n * sizeof(float));
  struct pit_rng r;
  pit_rng_seed(&r, seed);
  const int seq[3] = {b1, b2, b1};
  pit_net_zero_grad(ref);
  pit_net_zero_grad(fast);
  for (int t = 0; t < 3; t++) {
    int B = seq[t];
    fill(x, B * in_n, &r, 1.0);
    fill(dy, B * out_n, &r, 1.0 / B);
    const float *yr = NULL, *yf = NULL;
    rc = pit_net_forward(ref, x, B, 1, &yr, &e);
    CHECK(rc == 0, "%s: ref forward: %s", label, e.msg);
    rc = pit_net_forward(fast, x, B, 1, &yf, &e);
    CHECK(rc == 0, "%s: fast forward: %s", label, e.msg);
    if (rc || !yr)
      break;
    compare("train output", label, B, yf, yr, B * out_n);
    compare("BN running stats", label, B, pit_net_state(fast), pit_net_state(ref), m->nstate);
    /* t == 1: parameter gradients not wanted; they must stay untouched */
    int pg = t != 1;
    rc = pit_net_backward(ref, dy, dxr, pg, &e);
    CHECK(rc == 0, "%s: ref backward: %s", label, e.msg);
    rc = pit_net_backward(fast, dy, dxf, pg, &e);
    CHECK(rc == 0, "%s: fast backward: %s", label, e.msg);
    int before = nfail;
    compare("dx", label, B, dxf, dxr, B * in_n);
    /* gradients accumulate over t = 0 and t = 2 */
    compare("parameter gradients", label, B, pit_net_grads(fast), pit_net_grads(ref), m->nparams);
    if (nfail > before && !tie[0])
      kink_tie(m, pit_net_params(ref), x, B, tie, tien);
    /* backward without dx must give the same parameter gradients */
    rc = pit_net_forward(fast, x, B, 0, &yf, &e);
    CHECK(rc == 0, "%s: fast eval forward: %s", label, e.msg);
    rc = pit_net_forward(ref, x, B, 0, &yr, &e);
    CHECK(rc == 0, "%s: ref eval forward: %s", label, e.msg);
    compare("eval output", label, B, yf, yr, B * out_n);
  }
  /* a backward right after an eval forward is refused */
  CHECK(pit_net_backward(fast, dy, NULL, 1, &e) < 0, "%s: backward after eval forward accepted",
        label);
  /* a parameter change reaches the fast net's re-laid-out weights */
  float *pf = pit_net_params(fast), *pr = pit_net_params(ref);
  for (size_t i = 0; i < m->nparams; i++)
    pr[i] = pf[i] = pf[i] * 0.5f + 0.001f;
  pit_net_params_changed(fast);
  pit_net_params_changed(ref);
  const float *yr = NULL, *yf = NULL;
  if (pit_net_forward(ref, x, b2, 1, &yr, &e) == 0 && pit_net_forward(fast, x, b2, 1, &yf, &e) == 0)
    compare("output after parameter change", label, b2, yf, yr, b2 * out_n);
  else
    CHECK(0, "%s: forward after parameter change: %s", label, e.msg);
  free(x);
  free(dy);
  free(dxr);
  free(dxf);
  pit_net_free(ref);
  pit_net_free(fast);
}

/* One model spec, b1, b2, b1 (dcgan: DCGAN init): inputs from seed 5, redrawn (seeds 6,
 * 7) only when a kink tie explains a failure; the failures of the last attempt fail. */
static void run_case(const char *label, const struct pit_model_spec *m, int b1, int b2, int dcgan) {
  for (uint64_t seed = 5; seed < 8; seed++) {
    char tie[160] = "";
    fails[0] = 0;
    nfail = 0;
    try_worst = 0;
    run_once(label, m, b1, b2, dcgan, seed, tie, sizeof tie);
    if (nfail == 0 || !tie[0] || seed == 7) { /* this attempt counts */
      if (try_worst > worst || try_worst != try_worst) {
        worst = try_worst;
        snprintf(worst_what, sizeof worst_what, "%s", try_what);
      }
    }
    if (nfail == 0)
      return;
    if (!tie[0] || seed == 7) {
      CHECK(0, "%s%s%s", fails, tie[0] ? "(with a kink tie: " : "", tie[0] ? tie : "");
      return;
    }
    printf("%s: inputs of seed %llu redrawn: a kink tie (%s) explains\n%s", label, (unsigned long long)seed, tie,
           fails);
  }
}

/* Layer combinations the built-in models do not have: pooling straight on the
 * plain input (1-lane layout, overlapping 3x3/2 windows), on 8-channel blocks,
 * after a LeakyReLU (no fusion), a linear layer on the raw input, two
 * element-wise layers in a row (no in-place), a linear layer with a 4-D input. */
static void odd_specs(void) {
  struct pit_err e = {0};
  struct pit_model_spec m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "odd-a");
  struct pit_layer_spec *L = m.layer;
  int n = 0;
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_MAXPOOL, .k = 3, .stride = 2};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_CONV, .out_c = 8, .k = 3, .stride = 1, .pad = 1, .bias = 1};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_RELU};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_MAXPOOL, .k = 2, .stride = 2};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_CONV, .out_c = 32, .k = 3, .stride = 1, .pad = 1, .bias = 1};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_LEAKYRELU, .alpha = 0.1f};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_MAXPOOL, .k = 3, .stride = 1};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_BATCHNORM};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_LINEAR, .out_c = 20, .bias = 1};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_TANH};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_SIGMOID};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_LINEAR, .out_c = 5, .bias = 0};
  m.n = n;
  if (pit_model_spec_finish(&m, 3, 19, 19, &e) == 0)
    run_case("odd-a", &m, 3, 2, 0);
  else
    CHECK(0, "odd-a spec: %s", e.msg);
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "odd-b");
  n = 0;
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_LINEAR, .out_c = 12, .bias = 1};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_RELU};
  L[n++] = (struct pit_layer_spec){.kind = PIT_L_LINEAR, .out_c = 3, .bias = 1};
  m.n = n;
  if (pit_model_spec_finish(&m, 2, 3, 3, &e) == 0)
    run_case("odd-b", &m, 4, 1, 0);
  else
    CHECK(0, "odd-b spec: %s", e.msg);
}

/* Same thread count, same inputs: the fast backend's outputs and gradients are
 * bitwise identical between two nets (and so between runs). */
static void determinism(void) {
  struct pit_err e = {0};
  struct pit_model_spec g, d;
  if (pit_model_build("dcgan", 3, 32, 0, 100, &g, &d, &e)) {
    CHECK(0, "build dcgan: %s", e.msg);
    return;
  }
  const int B = 4;
  size_t in_n = (size_t)d.in_c * d.in_h * d.in_w * B;
  float *x = malloc(in_n * sizeof(float)), *dx[2], *gr[2], dy[4] = {0.3f, -0.2f, 0.1f, 0.4f};
  struct pit_rng r;
  pit_rng_seed(&r, 3);
  fill(x, in_n, &r, 1.0);
  struct pit_net *n[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    dx[k] = malloc(in_n * sizeof(float));
    gr[k] = NULL;
    if (pit_net_create(&n[k], &d, B, PIT_BACKEND_FAST, &e)) {
      CHECK(0, "fast create: %s", e.msg);
      continue;
    }
    pit_init_dcgan(&d, pit_net_params(n[k]), 2);
    pit_net_params_changed(n[k]);
    pit_net_zero_grad(n[k]);
    const float *y;
    if (pit_net_forward(n[k], x, B, 1, &y, &e) || pit_net_backward(n[k], dy, dx[k], 1, &e))
      CHECK(0, "fast pass: %s", e.msg);
    gr[k] = pit_net_grads(n[k]);
  }
  if (gr[0] && gr[1]) {
    CHECK(memcmp(gr[0], gr[1], d.nparams * sizeof(float)) == 0, "gradients differ between runs");
    CHECK(memcmp(dx[0], dx[1], in_n * sizeof(float)) == 0, "dx differs between runs");
  }
  for (int k = 0; k < 2; k++) {
    pit_net_free(n[k]);
    free(dx[k]);
  }
  free(x);
}

int main(void) {
  struct pit_err e = {0};
  struct pit_model_spec g, d;
  pit_nn_set_threads(2);
  odd_specs();
  determinism();
  if (pit_model_build("cnn", 3, 32, 10, 0, &g, NULL, &e) == 0)
    run_case("cnn 3x32x32", &g, 4, 3, 0);
  else
    CHECK(0, "build cnn: %s", e.msg);
  if (pit_model_build("cnn", 1, 28, 10, 0, &g, NULL, &e) == 0)
    run_case("cnn 1x28x28", &g, 5, 2, 0);
  else
    CHECK(0, "build cnn 28: %s", e.msg);
  if (pit_model_build("cnn-wide", 3, 32, 10, 0, &g, NULL, &e) == 0)
    run_case("cnn-wide", &g, 4, 1, 0);
  else
    CHECK(0, "build cnn-wide: %s", e.msg);
  if (pit_model_build("dcgan", 3, 32, 0, 100, &g, &d, &e) == 0) {
    run_case("dcgan32 G", &g, 3, 2, 1);
    run_case("dcgan32 D", &d, 3, 2, 1);
  } else
    CHECK(0, "build dcgan 32: %s", e.msg);
  if (pit_model_build("dcgan", 3, 64, 0, 100, &g, &d, &e) == 0) {
    run_case("dcgan64 G", &g, 2, 1, 1);
    run_case("dcgan64 D", &d, 2, 3, 1);
  } else
    CHECK(0, "build dcgan 64: %s", e.msg);
  /* esrgan: pixel shuffle, skip connections, RRDBs (batch stacked with separator rows in
   * the fast path: batches 1 and 3 both), the patch discriminator and VGG19[:35] */
  struct pit_model_spec v;
  /* batches 2, 1 for D: with 3, 2 one LeakyReLU input of D lies within float rounding of 0
   * and takes the other slope in one backend (measured: one channel's beta gradient 5.35
   * vs 5.75), which says nothing of the code */
  if (pit_model_build_esrgan(3, 32, 2, 16, &g, &d, NULL, &e) == 0) {
    run_case("esrgan G (2 RRDB, 16 filters)", &g, 3, 1, 0);
    run_case("esrgan D", &d, 2, 1, 0);
    /* D's batch_kernels: at batch 4 its 16x16 convolution (128 filters) runs on Winograd
     * (4 x 16 x 16 pixels), at batch 2 on direct */
    run_case("esrgan D, Winograd by the batch", &d, 4, 2, 0);
  } else
    CHECK(0, "build esrgan: %s", e.msg);
  /* hr 64, batch 2: the stacked 33x16 plane is past the fast RRDB's Winograd threshold
   * (batch 1, 16x16, stays direct) */
  if (pit_model_build_esrgan(3, 64, 1, 16, &g, &d, NULL, &e) == 0)
    run_case("esrgan G hr 64 (1 RRDB, 16 filters, Winograd at batch 2)", &g, 2, 1, 0);
  else
    CHECK(0, "build esrgan 64: %s", e.msg);
  if (pit_model_build_esrgan(3, 16, 0, 16, &g, &d, &v, &e) == 0) /* the reference VGG is slow */
    run_case("vgg19[:35] 16x16", &v, 2, 1, 0);
  else
    CHECK(0, "build esrgan 16: %s", e.msg);
  printf("worst relative error (attempts redrawn for a tie left out): %.3g (%s); oneDNN at %s\n", worst,
         worst_what, pit_nn_dnnl_isa());
  return check_done();
}

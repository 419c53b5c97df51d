/* test_gradcheck.c — the reference backend's written-out backward agrees with
 * central finite differences of its own forward, for every layer kind (stride,
 * padding, bias, batch > 1, BatchNorm in train mode), for dx and for every
 * parameter gradient; the same for both losses. Objective f = sum(y * r) with a
 * fixed random r, so df/dy = r. Also: gradients accumulate, param_grads=0 leaves
 * grads alone, dx=NULL works, MaxPool ties go to the first maximum, BatchNorm's
 * running stats follow PyTorch (momentum 0.1, unbiased variance). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/net_impl.h"

static struct pit_rng rng;
static double uni(double lo, double hi) { return lo + (hi - lo) * pit_rng_uniform(&rng); }

static struct pit_layer_spec mk(enum pit_layer_kind kind, int out_c, int k, int s, int p, int bias) {
  return (struct pit_layer_spec){.kind = kind, .out_c = out_c, .k = k, .stride = s, .pad = p,
                                 .bias = bias, .alpha = 0.2f};
}

/* ESRGAN's residual-in-residual dense block: LeakyReLU 0.01 inside, residual scaling 0.2 */
static struct pit_layer_spec rrdb(int filters) {
  return (struct pit_layer_spec){.kind = PIT_L_RRDB, .out_c = filters, .alpha = 0.01f, .scale = 0.2f};
}

struct gc_case {
  const char *name;
  int n;
  struct pit_layer_spec layer[10];
  int c, h, w, batch;
  double h_fd;      /* finite-difference step */
  double tol;       /* allowed |fd - analytic| / max(1, |analytic|) */
  int away_from_0;  /* inputs pushed to |x| >= 0.2 (ReLU kinks) */
  int distinct;     /* inputs a shuffled grid with gaps >> h (MaxPool ties) */
  int kinks;        /* skip samples where the one-sided slopes disagree (internal kinks) */
};

static double objective(struct pit_net *net, const float *x, int B, const float *r, size_t ny) {
  const float *y;
  struct pit_err e = {0};
  int rc = pit_net_forward(net, x, B, 1, &y, &e);
  if (rc) {
    fprintf(stderr, "forward failed: %s\n", e.msg);
    exit(1);
  }
  double f = 0;
  for (size_t j = 0; j < ny; j++)
    f += (double)y[j] * r[j];
  return f;
}

struct fd_stats {
  double max_abs, max_rel;
  int n, skipped;
};

/* Central difference of f w.r.t. *v; returns 0 if the sample was skipped (kink). */
static int fd_one(struct pit_net *net, float *x, int B, const float *r, size_t ny, float *v,
                  double h, int kinks, double *out) {
  const float orig = *v;
  const float vp = (float)(orig + h), vm = (float)(orig - h);
  *v = vp;
  double fp = objective(net, x, B, r, ny);
  *v = vm;
  double fm = objective(net, x, B, r, ny);
  double f0 = 0;
  if (kinks) {
    *v = orig;
    f0 = objective(net, x, B, r, ny);
  }
  *v = orig;
  *out = (fp - fm) / ((double)vp - (double)vm);
  if (kinks) {
    double sp = (fp - f0) / ((double)vp - orig), sm = (f0 - fm) / (orig - (double)vm);
    if (fabs(sp - sm) > 0.05 * (1.0 + fabs(sp) + fabs(sm)))
      return 0;
  }
  return 1;
}

static void record(struct fd_stats *st, double fd, double an, double tol, const char *what,
                   const char *name, size_t idx) {
  double abs_err = fabs(fd - an), rel = abs_err / fmax(1.0, fabs(an));
  if (abs_err > st->max_abs)
    st->max_abs = abs_err;
  if (rel > st->max_rel)
    st->max_rel = rel;
  st->n++;
  CHECK(rel <= tol, "%s: %s[%zu] finite difference %.7g vs backward %.7g", name, what, idx, fd, an);
}

static double worst_rel = 0;

static void run_case(const struct gc_case *gc, uint64_t seed) {
  struct pit_model_spec m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "%s", gc->name);
  m.n = gc->n;
  for (int i = 0; i < gc->n; i++)
    m.layer[i] = gc->layer[i];
  struct pit_err e = {0};
  int rc = pit_model_spec_finish(&m, gc->c, gc->h, gc->w, &e);
  CHECK(rc == 0, "%s: spec: %s", gc->name, e.msg);
  if (rc)
    return;
  struct pit_net *net;
  const int B = gc->batch;
  rc = pit_net_create(&net, &m, B + 2, PIT_BACKEND_REF, &e); /* max_batch > batch on purpose */
  CHECK(rc == 0, "%s: create: %s", gc->name, e.msg);
  if (rc)
    return;
  pit_rng_seed(&rng, seed);
  float *p = pit_net_params(net);
  for (size_t j = 0; j < m.nparams; j++)
    p[j] = (float)uni(-0.8, 0.8);
  for (int i = 0; i < m.n; i++) /* BN gamma around 1 */
    if (m.layer[i].kind == PIT_L_BATCHNORM)
      for (size_t j = 0; j < m.layer[i].w_len; j++)
        p[m.layer[i].w_off + j] = (float)uni(0.5, 1.5);
  for (int i = 0; i < m.n; i++) /* RRDB: 15 convs of fan-in up to 45F; keep activations O(1) */
    if (m.layer[i].kind == PIT_L_RRDB)
      for (size_t j = 0; j < m.nparams; j++)
        p[j] *= 0.25f;
  const size_t nx = (size_t)B * m.in_c * m.in_h * m.in_w;
  const size_t ny = (size_t)B * m.out_c * m.out_h * m.out_w;
  float *x = malloc(nx * sizeof(float)), *r = malloc(ny * sizeof(float));
  float *dx = malloc(nx * sizeof(float)), *dx2 = malloc(nx * sizeof(float));
  float *g1 = malloc((m.nparams + 1) * sizeof(float));
  for (size_t j = 0; j < nx; j++) {
    x[j] = (float)uni(-1, 1);
    if (gc->away_from_0)
      x[j] += x[j] < 0 ? -0.2f : 0.2f;
  }
  if (gc->distinct) { /* a shuffled grid: every value distinct, 0.05 apart */
    for (size_t j = 0; j < nx; j++)
      x[j] = -1.0f + 0.05f * (float)j;
    for (size_t j = nx - 1; j > 0; j--) {
      size_t k = pit_rng_next(&rng) % (j + 1);
      float t = x[j];
      x[j] = x[k];
      x[k] = t;
    }
  }
  for (size_t j = 0; j < ny; j++)
    r[j] = (float)uni(-1, 1);

  /* analytic gradients */
  const float *y;
  pit_net_zero_grad(net);
  CHECK(pit_net_forward(net, x, B, 1, &y, &e) == 0, "%s: forward: %s", gc->name, e.msg);
  CHECK(pit_net_backward(net, r, dx, 1, &e) == 0, "%s: backward: %s", gc->name, e.msg);
  memcpy(g1, pit_net_grads(net), m.nparams * sizeof(float));

  /* accumulation, dx = NULL, param_grads = 0 */
  CHECK(pit_net_backward(net, r, NULL, 1, &e) == 0, "%s: backward 2: %s", gc->name, e.msg);
  int acc_ok = 1;
  for (size_t j = 0; j < m.nparams; j++)
    acc_ok &= fabsf(pit_net_grads(net)[j] - 2 * g1[j]) <= 1e-6f * (1 + fabsf(g1[j]));
  CHECK(acc_ok, "%s: a second backward does not accumulate parameter gradients", gc->name);
  memcpy(pit_net_grads(net), g1, m.nparams * sizeof(float));
  CHECK(pit_net_backward(net, r, dx2, 0, &e) == 0, "%s: backward 3: %s", gc->name, e.msg);
  CHECK(memcmp(pit_net_grads(net), g1, m.nparams * sizeof(float)) == 0,
        "%s: param_grads=0 changed the gradients", gc->name);
  CHECK(memcmp(dx, dx2, nx * sizeof(float)) == 0, "%s: dx differs between backward calls",
        gc->name);

  /* finite differences */
  struct fd_stats sx = {0}, sp = {0};
  for (size_t j = 0; j < nx; j++) {
    double fd;
    if (!fd_one(net, x, B, r, ny, &x[j], gc->h_fd, gc->kinks, &fd)) {
      sx.skipped++;
      continue;
    }
    record(&sx, fd, dx[j], gc->tol, "dx", gc->name, j);
  }
  for (size_t j = 0; j < m.nparams; j++) {
    double fd;
    if (!fd_one(net, x, B, r, ny, &p[j], gc->h_fd, gc->kinks, &fd)) {
      sp.skipped++;
      continue;
    }
    record(&sp, fd, g1[j], gc->tol, "dparam", gc->name, j);
  }
  CHECK(sx.skipped * 20 <= (int)nx && sp.skipped * 20 <= (int)m.nparams + 1,
        "%s: too many samples on kinks (%d dx, %d params)", gc->name, sx.skipped, sp.skipped);
  CHECK(sx.n > 0 && (m.nparams == 0 || sp.n > 0), "%s: nothing checked", gc->name);
  printf("%-28s B=%d dx: %4d checked max abs %.2e rel %.2e | params: %5d checked max abs %.2e "
         "rel %.2e (skipped %d/%d)\n",
         gc->name, B, sx.n, sx.max_abs, sx.max_rel, sp.n, sp.max_abs, sp.max_rel, sx.skipped,
         sp.skipped);
  worst_rel = fmax(worst_rel, fmax(sx.max_rel, sp.max_rel));
  free(x);
  free(r);
  free(dx);
  free(dx2);
  free(g1);
  pit_net_free(net);
}

/* ---- losses ---- */
/* A loss over n values v (and a second operand w or a scalar target t), for finite differences. */
struct loss_in {
  double (*f)(const struct loss_in *in);
  float *v;
  const float *w;
  size_t n;
  float t;
  double denom;
};
static double pit_loss_bce_fn(const struct loss_in *in) {
  return pit_loss_bce(in->v, in->t, (int)in->n, in->denom, NULL);
}
static double bce_logits_fn(const struct loss_in *in) {
  return pit_loss_bce_logits(in->v, in->t, in->n, in->denom, NULL);
}
static double l1_fn(const struct loss_in *in) {
  return pit_loss_l1(in->v, in->w, in->n, in->denom, NULL);
}
/* Central difference of in->f w.r.t. *x (one of in->v), over the exact float step. */
static double loss_fd(const struct loss_in *in, float *x, double h) {
  const float o = *x;
  *x = (float)(o + h);
  double fp = in->f(in);
  const float up = *x;
  *x = (float)(o - h);
  double fm = in->f(in);
  double fd = (fp - fm) / ((double)up - *x);
  *x = o;
  return fd;
}

static void check_losses(void) {
  pit_rng_seed(&rng, 99);
  enum { B = 4, K = 6 };
  float z[B * K], dz[B * K];
  int32_t lab[B] = {0, 5, 2, 2};
  for (int j = 0; j < B * K; j++)
    z[j] = (float)uni(-3, 3);
  z[1 * K + 3] = 80.0f; /* a large logit: must stay finite (stable log-softmax) */
  const double denom = 10.0;
  double v = pit_loss_xent(z, lab, B, K, denom, dz);
  /* value from the definition, in double */
  double ref = 0;
  for (int b = 0; b < B; b++) {
    double mx = -1e300, s = 0;
    for (int k = 0; k < K; k++)
      mx = fmax(mx, z[b * K + k]);
    for (int k = 0; k < K; k++)
      s += exp(z[b * K + k] - mx);
    ref += mx + log(s) - z[b * K + lab[b]];
  }
  CHECK_NEAR(v, ref / denom, 1e-12, "xent value");
  CHECK(isfinite(v), "xent not finite with a large logit");
  double max_err = 0;
  for (int j = 0; j < B * K; j++) {
    float o = z[j];
    const double h = 1e-3;
    z[j] = (float)(o + h);
    double fp = pit_loss_xent(z, lab, B, K, denom, NULL);
    float up = z[j];
    z[j] = (float)(o - h);
    double fm = pit_loss_xent(z, lab, B, K, denom, NULL);
    double fd = (fp - fm) / ((double)up - z[j]);
    z[j] = o;
    max_err = fmax(max_err, fabs(fd - dz[j]));
    CHECK(fabs(fd - dz[j]) <= 1e-6, "xent d[%d]: fd %.9g vs %.9g", j, fd, dz[j]);
  }
  printf("%-28s value err %.2e, gradient max abs err %.2e\n", "loss xent", fabs(v - ref / denom),
         max_err);
  float zero[3] = {0, 0, 0};
  int32_t l0 = 1;
  CHECK_NEAR(pit_loss_xent(zero, &l0, 1, 3, 1.0, NULL), log(3.0), 1e-12, "xent of equal logits");
  int32_t bad = 3;
  CHECK(isnan(pit_loss_xent(zero, &bad, 1, 3, 1.0, NULL)), "label out of range is not NaN");

  float pr[B] = {0.1f, 0.5f, 0.73f, 0.999f}, dp[B];
  for (int t = 0; t <= 1; t++) {
    double vb = pit_loss_bce(pr, (float)t, B, denom, dp);
    double rb = 0;
    for (int b = 0; b < B; b++)
      rb += -(t * log(pr[b]) + (1 - t) * log(1.0 - pr[b]));
    CHECK_NEAR(vb, rb / denom, 1e-9, "bce value");
    double me = 0;
    for (int b = 0; b < B; b++) {
      struct loss_in in = {pit_loss_bce_fn, pr, NULL, B, (float)t, denom};
      double fd = loss_fd(&in, &pr[b], 1e-5);
      double err = fabs(fd - dp[b]) / fmax(1.0, fabs(dp[b]));
      me = fmax(me, err);
      CHECK(err <= 1e-4, "bce t=%d d[%d]: fd %.9g vs %.9g", t, b, fd, dp[b]);
    }
    printf("%-28s t=%d gradient max rel err %.2e\n", "loss bce", t, me);
  }
  /* PyTorch's clamp: log(0) counts as -100; the gradient divides by max(p(1-p), 1e-12) */
  float p01[2] = {0.0f, 1.0f}, d01[2];
  CHECK_NEAR(pit_loss_bce(p01, 1.0f, 2, 1.0, d01), 100.0, 1e-9, "bce clamp, target 1");
  CHECK_NEAR(pit_loss_bce(p01, 0.0f, 2, 2.0, d01), 50.0, 1e-9, "bce clamp, target 0");
  CHECK_NEAR(d01[0], 0.0, 0, "bce grad at p=0, t=0");
  CHECK_NEAR(d01[1] / (1.0 / 1e-12 / 2.0), 1.0, 1e-6, "bce grad at p=1, t=0 (relative)");

  float lg[3 * 3] = {1, 2, 3, 5, 5, 1, 0, -1, -2};
  int32_t lb[3] = {2, 1, 0};
  CHECK(pit_count_correct(lg, lb, 3, 3) == 2, "count_correct: ties go to the first index");
}

/* BCE with logits and L1 (ESRGAN's losses): value from the definition, gradient by
 * finite differences; large logits stay finite. */
static void check_gan_losses(void) {
  pit_rng_seed(&rng, 77);
  enum { N = 7 };
  float z[N] = {-3.0f, -0.4f, 0.0f, 0.3f, 2.5f, 60.0f, -60.0f}, dz[N];
  const double denom = 5.0;
  for (int t = 0; t <= 1; t++) {
    double v = pit_loss_bce_logits(z, (float)t, N, denom, dz);
    double ref = 0;
    for (int i = 0; i < N; i++) {
      double sg = 1.0 / (1.0 + exp(-(double)z[i]));
      /* far tails written out so the reference itself does not overflow */
      double lp = z[i] < -30 ? z[i] : log(sg), l1p = z[i] > 30 ? -z[i] : log(1.0 - sg);
      ref += -(t * lp + (1 - t) * l1p);
    }
    CHECK(fabs(v - ref / denom) <= 1e-9, "bce_logits value t=%d: %.12g vs %.12g", t, v, ref / denom);
    CHECK(isfinite(v), "bce_logits not finite for large logits");
    double me = 0;
    for (int i = 0; i < N; i++) {
      struct loss_in in = {bce_logits_fn, z, NULL, N, (float)t, denom};
      double fd = loss_fd(&in, &z[i], 1e-3);
      me = fmax(me, fabs(fd - dz[i]));
      CHECK(fabs(fd - dz[i]) <= 1e-6, "bce_logits t=%d d[%d]: fd %.9g vs %.9g", t, i, fd, dz[i]);
    }
    printf("%-28s t=%d gradient max abs err %.2e\n", "loss bce_logits", t, me);
  }
  float a[N], b[N], da[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)uni(-1, 1);
    b[i] = (float)uni(-1, 1);
  }
  b[3] = a[3]; /* equal: PyTorch's sign(0) = 0 */
  double v = pit_loss_l1(a, b, N, denom, da), ref = 0;
  for (int i = 0; i < N; i++)
    ref += fabs((double)a[i] - b[i]);
  CHECK_NEAR(v, ref / denom, 1e-7, "l1 value");
  CHECK(da[3] == 0.0f, "l1 gradient where equal is %g, not 0", da[3]);
  for (int i = 0; i < N; i++) {
    if (i == 3)
      continue;
    struct loss_in in = {l1_fn, a, b, N, 0.0f, denom};
    double fd = loss_fd(&in, &a[i], 1e-3);
    CHECK(fabs(fd - da[i]) <= 1e-4 * fabs(da[i]), "l1 d[%d]: fd %.9g vs %.9g", i, fd, da[i]);
  }
  printf("%-28s checked\n", "loss l1");
}

/* RaGAN (ESRGAN's adversarial loss) with the whole batch on one rank: value and both
 * gradients (direct part + the part through the batch means) against finite differences
 * of the value recomputed from scratch; and split over two "ranks" (column sums added
 * between the phases) it gives the same value and gradients. */
enum { RG_N = 3, RG_P = 4 };
/* The batch means (mr, mf), then the first phase over the whole batch. */
static double ragan_whole(const float *real, const float *fake, int disc, double *mr, double *mf,
                          float *dr, float *df, double *col) {
  for (int p = 0; p < RG_P; p++)
    mr[p] = mf[p] = 0;
  for (int b = 0; b < RG_N; b++)
    for (int p = 0; p < RG_P; p++) {
      mr[p] += real[b * RG_P + p] / (double)RG_N;
      mf[p] += fake[b * RG_P + p] / (double)RG_N;
    }
  return pit_loss_ragan_part(real, fake, RG_N, RG_P, RG_N, mr, mf, disc, dr, df, col);
}
static double ragan_value(const float *real, const float *fake, int disc) {
  double mr[RG_P], mf[RG_P], col[2 * RG_P];
  float dr[RG_N * RG_P], df[RG_N * RG_P];
  return ragan_whole(real, fake, disc, mr, mf, dr, df, col);
}
static void check_ragan(void) {
  pit_rng_seed(&rng, 55);
  float real[RG_N * RG_P], fake[RG_N * RG_P];
  for (int i = 0; i < RG_N * RG_P; i++) {
    real[i] = (float)uni(-2, 2);
    fake[i] = (float)uni(-2, 2);
  }
  for (int disc = 0; disc <= 1; disc++) {
    double mr[RG_P], mf[RG_P], col[2 * RG_P];
    float dr[RG_N * RG_P], df[RG_N * RG_P];
    double v = ragan_whole(real, fake, disc, mr, mf, dr, df, col);
    pit_loss_ragan_finish(RG_N, RG_P, RG_N, col, dr, df);
    /* the value from the definition */
    double ref = 0;
    for (int b = 0; b < RG_N; b++)
      for (int p = 0; p < RG_P; p++) {
        double zr = real[b * RG_P + p] - mf[p], zf = fake[b * RG_P + p] - mr[p];
        double sr = 1 / (1 + exp(-zr)), sf = 1 / (1 + exp(-zf));
        ref += disc ? -log(sr) - log(1 - sf) : -log(1 - sr) - log(sf);
      }
    ref /= 2.0 * RG_N * RG_P;
    CHECK(fabs(v - ref) < 1e-6, "ragan disc=%d value %.9g vs %.9g", disc, v, ref);
    double me = 0;
    for (int side = 0; side < 2; side++)
      for (int i = 0; i < RG_N * RG_P; i++) {
        float *x = side ? &fake[i] : &real[i], o = *x;
        const double h = 1e-3;
        *x = (float)(o + h);
        double fp = ragan_value(real, fake, disc);
        float up = *x;
        *x = (float)(o - h);
        double fm = ragan_value(real, fake, disc);
        double fd = (fp - fm) / ((double)up - *x);
        *x = o;
        double an = side ? df[i] : dr[i];
        me = fmax(me, fabs(fd - an));
        CHECK(fabs(fd - an) <= 1e-5, "ragan disc=%d d%s[%d]: fd %.9g vs %.9g", disc,
              side ? "fake" : "real", i, fd, an);
      }
    /* two ranks: rows {0} and {1, 2}, column sums added between the phases */
    double c0[2 * RG_P], c1[2 * RG_P];
    float r0[RG_P], f0[RG_P], r1[2 * RG_P], f1[2 * RG_P];
    double v2 = pit_loss_ragan_part(real, fake, 1, RG_P, RG_N, mr, mf, disc, r0, f0, c0) +
                pit_loss_ragan_part(real + RG_P, fake + RG_P, 2, RG_P, RG_N, mr, mf, disc, r1, f1, c1);
    for (int p = 0; p < 2 * RG_P; p++)
      c0[p] += c1[p];
    pit_loss_ragan_finish(1, RG_P, RG_N, c0, r0, f0);
    pit_loss_ragan_finish(2, RG_P, RG_N, c0, r1, f1);
    CHECK(fabs(v2 - v) < 1e-12, "ragan split value %.12g vs %.12g", v2, v);
    int same = 1;
    for (int p = 0; p < RG_P; p++)
      same &= fabsf(r0[p] - dr[p]) < 1e-7f && fabsf(f0[p] - df[p]) < 1e-7f;
    for (int i = 0; i < 2 * RG_P; i++)
      same &= fabsf(r1[i] - dr[RG_P + i]) < 1e-7f && fabsf(f1[i] - df[RG_P + i]) < 1e-7f;
    CHECK(same, "ragan disc=%d: split over two ranks gives other gradients", disc);
    printf("%-28s disc=%d gradient max abs err %.2e\n", "loss ragan", disc, me);
  }
}

/* ---- specific behaviours ---- */
static void check_maxpool_ties_and_bn_stats(void) {
  struct pit_model_spec m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "pool-ties");
  m.n = 1;
  m.layer[0] = mk(PIT_L_MAXPOOL, 0, 2, 2, 0, 0);
  struct pit_err e = {0};
  CHECK(pit_model_spec_finish(&m, 1, 2, 4, &e) == 0, "%s", e.msg);
  struct pit_net *net;
  CHECK(pit_net_create(&net, &m, 1, PIT_BACKEND_REF, &e) == 0, "%s", e.msg);
  float x[8] = {1, 3, 2, 2, /* */ 3, 0, 2, 2}, dy[2] = {10, 20}, dx[8];
  const float *y;
  CHECK(pit_net_forward(net, x, 1, 1, &y, &e) == 0, "%s", e.msg);
  CHECK(y[0] == 3 && y[1] == 2, "maxpool values %g %g", y[0], y[1]);
  CHECK(pit_net_backward(net, dy, dx, 1, &e) == 0, "%s", e.msg);
  float want[8] = {0, 10, 20, 0, 0, 0, 0, 0};
  CHECK(memcmp(dx, want, sizeof want) == 0, "maxpool tie gradient not at the first maximum");
  pit_net_free(net);

  /* BatchNorm running stats and eval mode */
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "bn");
  m.n = 1;
  m.layer[0] = mk(PIT_L_BATCHNORM, 0, 0, 0, 0, 0);
  CHECK(pit_model_spec_finish(&m, 2, 1, 3, &e) == 0, "%s", e.msg);
  CHECK(m.nparams == 4 && m.nstate == 4, "bn sizes %zu %zu", m.nparams, m.nstate);
  CHECK(pit_net_create(&net, &m, 2, PIT_BACKEND_REF, &e) == 0, "%s", e.msg);
  float *p = pit_net_params(net), *s = pit_net_state(net);
  p[0] = 1, p[1] = 2, p[2] = 0, p[3] = 0.5f;       /* gamma (2), beta (2) */
  float xb[12] = {1, 2, 3, 10, 10, 10, 5, 6, 7, 0, 2, 4}; /* (2, 2, 1, 3) */
  CHECK(s[0] == 0 && s[1] == 0 && s[2] == 1 && s[3] == 1, "bn state not initialised");
  CHECK(pit_net_forward(net, xb, 2, 1, &y, &e) == 0, "%s", e.msg);
  /* channel 0: {1,2,3,5,6,7}: mean 4, ss 28, biased var 28/6, unbiased 28/5 */
  CHECK_NEAR(s[0], 0.4, 1e-6, "running mean c0");
  CHECK_NEAR(s[2], 0.9 + 0.1 * 5.6, 1e-6, "running var c0 (unbiased)");
  /* channel 1: {10,10,10,0,2,4}: mean 6, ss = 3*16+36+16+4 = 104, unbiased 20.8 */
  CHECK_NEAR(s[1], 0.6, 1e-6, "running mean c1");
  CHECK_NEAR(s[3], 0.9 + 0.1 * 20.8, 1e-5, "running var c1 (unbiased)");
  CHECK_NEAR(y[0], (1 - 4) / sqrt(14.0 / 3 + 1e-5), 1e-5, "bn train output");
  CHECK_NEAR(y[3], 2 * (10 - 6) / sqrt(104.0 / 6 + 1e-5) + 0.5, 1e-5, "bn train output c1");
  CHECK(pit_net_forward(net, xb, 2, 0, &y, &e) == 0, "%s", e.msg);
  CHECK_NEAR(y[0], (1 - 0.4) / sqrt(1.46 + 1e-5), 1e-5, "bn eval output");
  CHECK_NEAR(y[3], 2 * (10 - 0.6) / sqrt(0.9 + 2.08 + 1e-5) + 0.5, 1e-5, "bn eval output c1");
  CHECK_NEAR(s[0], 0.4, 1e-6, "eval forward changed running mean");
  CHECK(pit_net_backward(net, xb, NULL, 1, &e) == PIT_ESTATE, "backward after eval forward accepted");
  CHECK(strstr(e.msg, "train forward") != NULL, "message: %s", e.msg);
  float one[2] = {1, 2};
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "bn1");
  m.n = 1;
  m.layer[0] = mk(PIT_L_BATCHNORM, 0, 0, 0, 0, 0);
  pit_net_free(net);
  CHECK(pit_model_spec_finish(&m, 2, 1, 1, &e) == 0, "%s", e.msg);
  CHECK(pit_net_create(&net, &m, 2, PIT_BACKEND_REF, &e) == 0, "%s", e.msg);
  CHECK(pit_net_forward(net, one, 1, 1, &y, &e) == PIT_EARG, "bn train on 1 value accepted");
  CHECK(strstr(e.msg, "more than one value") != NULL, "message: %s", e.msg);
  CHECK(pit_net_forward(net, one, 3, 1, &y, &e) == PIT_EARG, "batch above max_batch accepted");
  pit_net_free(net);
}

int main(void) {
  const double H = 1e-2;
  struct gc_case cases[] = {
      {"conv k3 s1 p1 bias", 1, {mk(PIT_L_CONV, 4, 3, 1, 1, 1)}, 3, 5, 5, 2, H, 1e-3, 0, 0, 0},
      {"conv k3 s2 p1 nobias", 1, {mk(PIT_L_CONV, 3, 3, 2, 1, 0)}, 2, 7, 6, 3, H, 1e-3, 0, 0, 0},
      {"conv k4 s2 p0", 1, {mk(PIT_L_CONV, 3, 4, 2, 0, 1)}, 2, 8, 9, 2, H, 1e-3, 0, 0, 0},
      {"conv k5 s1 p0 (cnn)", 1, {mk(PIT_L_CONV, 2, 5, 1, 0, 1)}, 3, 7, 7, 2, H, 1e-3, 0, 0, 0},
      {"conv k2 s3 p2", 1, {mk(PIT_L_CONV, 2, 2, 3, 2, 1)}, 2, 5, 6, 2, H, 1e-3, 0, 0, 0},
      {"deconv k4 s2 p1", 1, {mk(PIT_L_DECONV, 2, 4, 2, 1, 0)}, 3, 3, 3, 2, H, 1e-3, 0, 0, 0},
      {"deconv k4 s2 p1 bias", 1, {mk(PIT_L_DECONV, 3, 4, 2, 1, 1)}, 2, 2, 3, 3, H, 1e-3, 0, 0, 0},
      {"deconv k4 s1 p0 from 1x1", 1, {mk(PIT_L_DECONV, 3, 4, 1, 0, 0)}, 5, 1, 1, 2, H, 1e-3, 0, 0, 0},
      {"deconv k3 s2 p0", 1, {mk(PIT_L_DECONV, 2, 3, 2, 0, 1)}, 2, 3, 4, 2, H, 1e-3, 0, 0, 0},
      {"deconv k3 s3 p2", 1, {mk(PIT_L_DECONV, 2, 3, 3, 2, 1)}, 2, 3, 3, 2, H, 1e-3, 0, 0, 0},
      {"linear bias", 1, {mk(PIT_L_LINEAR, 5, 0, 0, 0, 1)}, 3, 2, 2, 3, H, 1e-3, 0, 0, 0},
      {"linear nobias", 1, {mk(PIT_L_LINEAR, 4, 0, 0, 0, 0)}, 7, 1, 1, 2, H, 1e-3, 0, 0, 0},
      {"maxpool k2 s2", 1, {mk(PIT_L_MAXPOOL, 0, 2, 2, 0, 0)}, 2, 4, 6, 2, H, 1e-3, 0, 1, 0},
      {"maxpool k2 s2 odd size", 1, {mk(PIT_L_MAXPOOL, 0, 2, 2, 0, 0)}, 1, 5, 7, 2, H, 1e-3, 0, 1, 0},
      {"maxpool k3 s2 overlap", 1, {mk(PIT_L_MAXPOOL, 0, 3, 2, 0, 0)}, 2, 7, 7, 2, H, 1e-3, 0, 1, 0},
      {"batchnorm train", 1, {mk(PIT_L_BATCHNORM, 0, 0, 0, 0, 0)}, 3, 3, 3, 4, H, 2e-3, 0, 0, 0},
      {"batchnorm train 1x1", 1, {mk(PIT_L_BATCHNORM, 0, 0, 0, 0, 0)}, 4, 1, 1, 3, H, 2e-3, 0, 0, 0},
      {"relu", 1, {mk(PIT_L_RELU, 0, 0, 0, 0, 0)}, 2, 3, 3, 2, H, 1e-3, 1, 0, 0},
      {"leakyrelu 0.2", 1, {mk(PIT_L_LEAKYRELU, 0, 0, 0, 0, 0)}, 2, 3, 3, 2, H, 1e-3, 1, 0, 0},
      {"tanh", 1, {mk(PIT_L_TANH, 0, 0, 0, 0, 0)}, 2, 3, 3, 2, H, 1e-3, 0, 0, 0},
      {"sigmoid", 1, {mk(PIT_L_SIGMOID, 0, 0, 0, 0, 0)}, 2, 3, 3, 2, H, 1e-3, 0, 0, 0},
      {"conv-bn-lrelu-pool-linear", 5,
       {mk(PIT_L_CONV, 3, 3, 1, 1, 0), mk(PIT_L_BATCHNORM, 0, 0, 0, 0, 0),
        mk(PIT_L_LEAKYRELU, 0, 0, 0, 0, 0), mk(PIT_L_MAXPOOL, 0, 2, 2, 0, 0),
        mk(PIT_L_LINEAR, 3, 0, 0, 0, 1)},
       2, 6, 6, 3, 3e-3, 3e-3, 0, 0, 1},
      {"deconv-bn-relu-deconv-tanh", 5,
       {mk(PIT_L_DECONV, 4, 4, 1, 0, 0), mk(PIT_L_BATCHNORM, 0, 0, 0, 0, 0),
        mk(PIT_L_RELU, 0, 0, 0, 0, 0), mk(PIT_L_DECONV, 2, 4, 2, 1, 0), mk(PIT_L_TANH, 0, 0, 0, 0, 0)},
       3, 1, 1, 3, 1e-3, 3e-3, 0, 0, 1},
      {"conv-lrelu-conv-bn-sigmoid", 5,
       {mk(PIT_L_CONV, 3, 4, 2, 1, 0), mk(PIT_L_LEAKYRELU, 0, 0, 0, 0, 0),
        mk(PIT_L_CONV, 2, 4, 2, 1, 0), mk(PIT_L_BATCHNORM, 0, 0, 0, 0, 0),
        mk(PIT_L_SIGMOID, 0, 0, 0, 0, 0)},
       2, 8, 8, 3, 3e-3, 3e-3, 0, 0, 1},
      /* ESRGAN's layers */
      {"pixelshuffle 2", 1, {mk(PIT_L_SHUFFLE, 0, 2, 0, 0, 0)}, 8, 3, 2, 2, H, 1e-3, 0, 0, 0},
      {"pixelshuffle 3", 1, {mk(PIT_L_SHUFFLE, 0, 3, 0, 0, 0)}, 9, 2, 3, 2, H, 1e-3, 0, 0, 0},
      {"skip-conv-lrelu-skipadd", 4,
       {mk(PIT_L_SKIP, 0, 0, 0, 0, 0), mk(PIT_L_CONV, 3, 3, 1, 1, 1),
        mk(PIT_L_LEAKYRELU, 0, 0, 0, 0, 0), mk(PIT_L_SKIPADD, 0, 0, 0, 0, 0)},
       3, 4, 4, 2, 3e-3, 3e-3, 0, 0, 1},
      {"nested skips", 6,
       {mk(PIT_L_SKIP, 0, 0, 0, 0, 0), mk(PIT_L_CONV, 2, 3, 1, 1, 1), mk(PIT_L_SKIP, 0, 0, 0, 0, 0),
        mk(PIT_L_CONV, 2, 3, 1, 1, 0), mk(PIT_L_SKIPADD, 0, 0, 0, 0, 0),
        mk(PIT_L_SKIPADD, 0, 0, 0, 0, 0)},
       2, 3, 4, 2, 3e-3, 3e-3, 0, 0, 0},
      {"rrdb F=2", 1, {rrdb(2)}, 2, 4, 3, 2, 3e-3, 3e-3, 0, 0, 1},
      /* 19 convs deep in float: finite differences carry ~1e-5 of noise in f (measured:
       * errors move with h), so 2e-2 here; a wiring error shows as O(1) */
      {"esrgan-mini (conv skip rrdb conv add up x2)", 9,
       {mk(PIT_L_CONV, 4, 3, 1, 1, 1), mk(PIT_L_SKIP, 0, 0, 0, 0, 0), rrdb(4),
        mk(PIT_L_CONV, 4, 3, 1, 1, 1), mk(PIT_L_SKIPADD, 0, 0, 0, 0, 0),
        mk(PIT_L_CONV, 8, 3, 1, 1, 1), mk(PIT_L_LEAKYRELU, 0, 0, 0, 0, 0),
        mk(PIT_L_SHUFFLE, 0, 2, 0, 0, 0), mk(PIT_L_CONV, 3, 3, 1, 1, 1)},
       3, 2, 2, 2, 2e-3, 2e-2, 0, 0, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_case(&cases[i], 1000 + i);
  check_losses();
  check_gan_losses();
  check_ragan();
  check_maxpool_ties_and_bn_stats();
  printf("worst relative error over all layer checks: %.2e\n", worst_rel);
  return check_done();
}

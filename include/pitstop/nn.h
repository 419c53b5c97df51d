/* pitstop/nn.h — models, networks, losses, optimizers.
 *
 * A model is a list of layer specs (struct pit_model_spec). A network
 * (struct pit_net) instantiates a spec for a maximum batch size on one backend:
 *   PIT_BACKEND_REF  — readable plain-C reference, every backward written out;
 *   PIT_BACKEND_FAST — the fast path (oneDNN / OpenBLAS), cross-checked against REF.
 * Both backends share the parameter layout: one contiguous float array holding,
 * layer by layer, PyTorch's own tensors in PyTorch's order and shape:
 *   conv   weight (O, I, kh, kw), bias (O) if any
 *   deconv weight (I, O, kh, kw), bias (O) if any     (ConvTranspose2d)
 *   linear weight (O, I), bias (O)
 *   bnorm  weight/gamma (C), bias/beta (C)
 *   rrdb   for dense block d = 0..2, conv j = 1..5: weight (F, j*F, 3, 3), bias (F)
 *          (PyTorch-GAN's dense_blocks.d.bj.0.weight / .bias order)
 * Gradients have the same layout (one contiguous array: what MPI allreduces).
 * Non-trained state (BatchNorm running mean then running var, per BN layer)
 * lives in a separate array (checkpointed, not reduced).
 * Activations are plain NCHW at the network boundary: input (B, C, H, W),
 * output (B, out_c, out_h, out_w); a classifier's output is (B, K) logits,
 * the DCGAN discriminator's (B, 1, 1, 1) probabilities.
 */
#ifndef PITSTOP_NN_H
#define PITSTOP_NN_H

#include <stddef.h>
#include <stdint.h>

#include "pitstop/util.h"

enum pit_layer_kind {
  PIT_L_CONV,       /* Conv2d(out_c, k, stride, pad, bias) */
  PIT_L_DECONV,     /* ConvTranspose2d(out_c, k, stride, pad, bias) */
  PIT_L_LINEAR,     /* Linear(out_c, bias); input flattened as (C, H, W) */
  PIT_L_MAXPOOL,    /* MaxPool2d(k, stride) */
  PIT_L_BATCHNORM,  /* BatchNorm2d(C), eps 1e-5, momentum 0.1, affine */
  PIT_L_RELU,
  PIT_L_LEAKYRELU,  /* slope alpha */
  PIT_L_TANH,
  PIT_L_SIGMOID,
  PIT_L_SHUFFLE,    /* PixelShuffle(k): (C*k*k, H, W) → (C, H*k, W*k) */
  PIT_L_SKIP,       /* opens a skip connection: y = x, x is kept for the matching SKIPADD */
  PIT_L_SKIPADD,    /* closes the innermost open SKIP: y = x + (input of that SKIP) */
  PIT_L_RRDB        /* ESRGAN residual-in-residual dense block of out_c filters (= in_c):
                       3 dense blocks of five 3x3 convs (growth out_c by concatenation,
                       LeakyReLU alpha after the first four), each y = scale*conv5 + x,
                       and y = scale*dense3(dense2(dense1(x))) + x around the three */
};

struct pit_layer_spec {
  enum pit_layer_kind kind;
  int out_c;        /* conv/deconv/linear: output channels / features */
  int k, stride, pad;
  int bias;         /* 1: has a bias vector */
  float alpha;      /* LeakyReLU slope (RRDB: of its dense convs) */
  float scale;      /* RRDB: residual scaling (ESRGAN 0.2) */
  /* Filled by pit_model_spec_finish: */
  int in_c, in_h, in_w;    /* input shape of this layer (per sample) */
  int o_c, o_h, o_w;       /* output shape of this layer (per sample) */
  size_t w_off, w_len;     /* offset/length of the weight (gamma) in the params array */
  size_t b_off, b_len;     /* offset/length of the bias (beta); b_len 0 if none */
  size_t s_off;            /* BN: offset of running mean in the state array (var follows, C each) */
  int pair;                /* SKIPADD: index of its SKIP layer */
  double flops_fwd;        /* multiply-adds*2 per sample, forward (conv/deconv/linear only) */
};

#define PIT_MAX_LAYERS 64

struct pit_model_spec {
  char name[32];
  int n;
  struct pit_layer_spec layer[PIT_MAX_LAYERS];
  int in_c, in_h, in_w;
  int out_c, out_h, out_w;
  size_t nparams;          /* total floats in the params array */
  size_t nstate;           /* total floats in the state array */
  double flops_fwd;        /* per sample */
  int batch_kernels;       /* 1: the fast backend may pick convolution kernels by the batch
                              size (Winograd from batch x plane >= 1024 pixels), so 1 and N
                              ranks may differ in rounding; 0 (default): by the layer alone.
                              Set for nets never compared across rank counts (ESRGAN's D
                              and VGG: they do not run in the pixel-loss warm-up) */
};

/* Computes shapes, offsets and FLOPs; rejects impossible shapes with a message. */
int pit_model_spec_finish(struct pit_model_spec *m, int in_c, int in_h, int in_w, struct pit_err *e);

/* The built-in models. For a classifier ("cnn", "cnn-wide") *gen is the net and
 * disc is unused (may be NULL). For "dcgan" gen is the generator (input (nz,1,1))
 * and disc the discriminator (input (channels, size, size)); image_size 64 or 32.
 * classes: number of outputs of a classifier. */
int pit_model_build(const char *name, int channels, int image_size, int classes, int nz,
                    struct pit_model_spec *gen, struct pit_model_spec *disc, struct pit_err *e);
int pit_model_is_gan(const char *name);

/* ESRGAN as PyTorch-GAN's esrgan/models.py, 4x super-resolution of channels-channel
 * images of hr x hr (hr a multiple of 16):
 *   gen  GeneratorRRDB: (channels, hr/4, hr/4) → (channels, hr, hr): conv 3x3 → skip →
 *        `blocks` RRDBs of `filters` (LeakyReLU 0.01 inside — PyTorch's default slope,
 *        as the original's nn.LeakyReLU() —, residual scaling 0.2) → conv → skip-add →
 *        2 x (conv to 4*filters, LeakyReLU 0.01, pixel shuffle 2) → conv → LeakyReLU → conv;
 *   disc the VGG-style patch discriminator: (channels, hr, hr) → (1, hr/16, hr/16) logits;
 *   vgg  VGG19's features[:35] (through conv5_4, before its ReLU): (3, hr, hr) →
 *        (512, hr/16, hr/16), the content loss's feature extractor (vgg may be NULL). */
int pit_model_build_esrgan(int channels, int hr, int blocks, int filters,
                           struct pit_model_spec *gen, struct pit_model_spec *disc,
                           struct pit_model_spec *vgg, struct pit_err *e);

/* ---- networks ---- */
enum pit_backend { PIT_BACKEND_REF = 0, PIT_BACKEND_FAST = 1 };

struct pit_net;

int pit_net_create(struct pit_net **out, const struct pit_model_spec *spec, int max_batch,
                   enum pit_backend be, struct pit_err *e);
void pit_net_free(struct pit_net *net);
const struct pit_model_spec *pit_net_spec(const struct pit_net *net);
float *pit_net_params(struct pit_net *net);   /* (nparams) */
float *pit_net_grads(struct pit_net *net);    /* (nparams) */
float *pit_net_state(struct pit_net *net);    /* (nstate) */
void pit_net_zero_grad(struct pit_net *net);
/* Forward pass on batch ≤ max_batch samples. x: (batch, in_c, in_h, in_w) plain.
 * train=1: BatchNorm uses batch statistics and updates running stats; keeps what
 * backward needs. *y points to (batch, out_c, out_h, out_w), valid until the next call. */
int pit_net_forward(struct pit_net *net, const float *x, int batch, int train, const float **y,
                    struct pit_err *e);
/* Backward of the last train forward. dy: (batch, out...) gradient of the loss.
 * dx: (batch, in...) gradient w.r.t. the input, or NULL if not needed.
 * param_grads=1: ACCUMULATES parameter gradients into grads (zero them yourself);
 * 0: leaves grads untouched (e.g. the DCGAN generator step through D). */
int pit_net_backward(struct pit_net *net, const float *dy, float *dx, int param_grads,
                     struct pit_err *e);
/* The parameters changed outside the net (optimizer step, broadcast, checkpoint
 * load): a backend that keeps its own copy in another layout refreshes it. */
void pit_net_params_changed(struct pit_net *net);

/* Threads for every kernel library (OpenMP, oneDNN, OpenBLAS). */
void pit_nn_set_threads(int threads);

/* The instruction set this process runs (src/nn/isa.c), chosen once on first use: the
 * best the CPU has for pitstop's own vector code, capped by oneDNN's effective ISA
 * (ONEDNN_MAX_CPU_ISA) and by PIT_ISA (plain|avx2|avx512). */
enum pit_isa { PIT_ISA_PLAIN, PIT_ISA_AVX2, PIT_ISA_AVX512 };
enum pit_isa pit_nn_isa(void);
const char *pit_nn_isa_name(enum pit_isa isa); /* "plain", "avx2", "avx512" */
const char *pit_nn_dnnl_isa(void);             /* oneDNN's: "avx2", "avx512_core", ... */
/* One line naming the oneDNN reference kernels the fast backend was given in this
 * process (the first layer, its kernel and ISA, and how many more), or "" if none. */
const char *pit_nn_fast_warning(void);

/* ---- parameter initialisation (deterministic for a seed) ---- */
/* PyTorch's default for Conv/Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias. */
void pit_init_default(const struct pit_model_spec *m, float *params, uint64_t seed);
/* DCGAN's weights_init: conv/deconv N(0, 0.02); BN gamma N(1, 0.02), beta 0. */
void pit_init_dcgan(const struct pit_model_spec *m, float *params, uint64_t seed);
/* Conv layers' weight and bias from a safetensors file (F32; layer i's tensors named
 * "i.weight" / "i.bias", any dotted prefix: torchvision's features[...] state_dict).
 * A missing tensor, another dtype or shape, or a truncated file → PIT_EFORMAT with one
 * message naming the file and the tensor; params is then left untouched. */
int pit_safetensors_load(const char *path, const struct pit_model_spec *m, float *params,
                         struct pit_err *e);
/* BN running stats: mean 0, var 1. */
void pit_init_state(const struct pit_model_spec *m, float *state);

/* ---- losses: value is the SUM over the batch divided by denom; the gradient
 * written to d* is d(value)/d(input). Pass denom = global batch so that
 * summing ranks' gradients gives the gradient of the global mean loss. ---- */
/* logits (B, K), labels (B) → cross-entropy; dlogits (B, K) or NULL. */
double pit_loss_xent(const float *logits, const int32_t *labels, int B, int K, double denom,
                     float *dlogits);
/* probabilities p (B), target t (scalar, same for all) → binary cross-entropy
 * with PyTorch's clamp of log at -100; dp (B) or NULL. */
double pit_loss_bce(const float *p, float target, int B, double denom, float *dp);
/* logits z (n), target t (scalar, same for all) → BCEWithLogits:
 * max(z,0) - z*t + log(1 + e^-|z|) (stable); dz (n) = (sigmoid(z) - t) / denom, or NULL. */
double pit_loss_bce_logits(const float *z, float target, size_t n, double denom, float *dz);
/* a, b (n) → L1: sum |a - b| / denom; da (n) = sign(a - b) / denom (0 where equal), or NULL. */
double pit_loss_l1(const float *a, const float *b, size_t n, double denom, float *da);
/* Relativistic average GAN loss on patch logits (ESRGAN's), for a global batch of N
 * samples with P logits each, of which this rank holds n (rows of real and fake, (n, P)):
 *   gen (disc = 0):  ½ [BCE(fake − mean_real, 1) + BCE(real − mean_fake, 0)]
 *   disc (disc = 1): ½ [BCE(real − mean_fake, 1) + BCE(fake − mean_real, 0)]
 * BCE with logits averaged over the N·P logits; mean_real / mean_fake (P) are the means
 * over the GLOBAL batch of each patch position (PyTorch's pred.mean(0, keepdim=True)).
 * In two phases so ranks can sum in between:
 *   part:   returns this rank's share of the value; writes the direct gradients
 *           dreal, dfake (n, P) and col (2P): the column sums of the real term's and the
 *           fake term's gradients (to be summed over all ranks);
 *   finish: given the summed col, subtracts what flows back through the means:
 *           dfake[b,p] -= col[p] / N, dreal[b,p] -= col[P + p] / N.
 * The generator's dreal is unused (the original detaches pred_real). */
double pit_loss_ragan_part(const float *real, const float *fake, int n, int P, double N,
                           const double *mean_real, const double *mean_fake, int disc,
                           float *dreal, float *dfake, double *col);
void pit_loss_ragan_finish(int n, int P, double N, const double *col, float *dreal, float *dfake);
/* Number of rows whose argmax equals the label. */
int pit_count_correct(const float *logits, const int32_t *labels, int B, int K);

/* ---- optimizers (PyTorch semantics) over flat arrays ---- */
enum pit_optim_kind { PIT_OPT_SGD, PIT_OPT_ADAM };
struct pit_optim {
  enum pit_optim_kind kind;
  size_t n;
  double lr, momentum, weight_decay;  /* SGD */
  double beta1, beta2, eps;           /* Adam */
  int64_t t;                          /* steps taken */
  float *m;                           /* SGD momentum buffer / Adam first moment (n) */
  float *v;                           /* Adam second moment (n); NULL for SGD */
};
int pit_optim_init(struct pit_optim *o, enum pit_optim_kind kind, size_t n, double lr,
                   struct pit_err *e);
void pit_optim_release(struct pit_optim *o);
void pit_optim_step(struct pit_optim *o, float *params, const float *grads);

/* Deterministic RNG (splitmix64 seeding a xoshiro256**), for init and noise. */
struct pit_rng { uint64_t s[4]; };
void pit_rng_seed(struct pit_rng *r, uint64_t seed);
uint64_t pit_rng_next(struct pit_rng *r);
double pit_rng_uniform(struct pit_rng *r);          /* [0, 1) */
double pit_rng_normal(struct pit_rng *r);           /* N(0, 1) */

#endif

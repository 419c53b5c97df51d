/* ref_layers.h — the reference (plain C, NCHW float) layer kernels used by
 * ref_net.c. Private to src/nn.
 *
 * Conventions for every kernel:
 *   - B is the batch; per-sample shapes come from the layer spec L
 *     (input (B, in_c, in_h, in_w), output (B, o_c, o_h, o_w)).
 *   - forward writes y completely (never accumulates).
 *   - backward gets dy (gradient of the layer output) and
 *       writes dx completely if dx != NULL (gradient of the layer input);
 *       ACCUMULATES parameter gradients into dw / db if they are non-NULL.
 *   - w / b point to the layer's slice of the flat parameter array (b NULL if no bias).
 */
#ifndef PIT_NN_REF_LAYERS_H
#define PIT_NN_REF_LAYERS_H

#include "pitstop/nn.h"

/* Index range [*lo, *hi) of a in [0, na) such that a*stride - pad + k lies in
 * [0, nb). Used for convolution (a = output row, result = input row) and
 * transposed convolution (a = input row, result = output row). */
void pit_ref_valid_range(int na, int nb, int stride, int pad, int k, int *lo, int *hi);

/* ref_conv.c — Conv2d, weight (O, I, k, k). */
void pit_ref_conv_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                          const float *b, float *y);
void pit_ref_conv_backward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                           const float *dy, float *dx, float *dw, float *db);

/* ref_conv.c — ConvTranspose2d, weight (I, O, k, k). */
void pit_ref_deconv_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                            const float *b, float *y);
void pit_ref_deconv_backward(const struct pit_layer_spec *L, int B, const float *x,
                             const float *w, const float *dy, float *dx, float *dw, float *db);

/* ref_linear.c — Linear, weight (O, I) with I = in_c*in_h*in_w. */
void pit_ref_linear_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                            const float *b, float *y);
void pit_ref_linear_backward(const struct pit_layer_spec *L, int B, const float *x,
                             const float *w, const float *dy, float *dx, float *dw, float *db);

/* ref_pool.c — MaxPool2d(k, stride), no padding. argmax (B, o_c, o_h, o_w):
 * index within the input plane of the (first) maximum of each window. */
void pit_ref_maxpool_forward(const struct pit_layer_spec *L, int B, const float *x, float *y,
                             int32_t *argmax);
void pit_ref_maxpool_backward(const struct pit_layer_spec *L, int B, const int32_t *argmax,
                              const float *dy, float *dx);

/* ref_bnorm.c — BatchNorm2d, eps 1e-5, momentum 0.1.
 * Train: normalises with the batch mean / biased variance, saves them as
 * mean (C) and invstd (C) for backward, and updates running_mean/var (C each)
 * with the unbiased variance. Eval: normalises with the running stats.
 * Train needs more than one value per channel (B*H*W > 1), like PyTorch. */
void pit_ref_bnorm_forward_train(const struct pit_layer_spec *L, int B, const float *x,
                                 const float *gamma, const float *beta, float *running_mean,
                                 float *running_var, float *mean, float *invstd, float *y);
void pit_ref_bnorm_forward_eval(const struct pit_layer_spec *L, int B, const float *x,
                                const float *gamma, const float *beta,
                                const float *running_mean, const float *running_var, float *y);
void pit_ref_bnorm_backward(const struct pit_layer_spec *L, int B, const float *x,
                            const float *gamma, const float *mean, const float *invstd,
                            const float *dy, float *dx, float *dgamma, float *dbeta);

/* ref_act.c — elementwise activations over n = B*C*H*W values. backward gets
 * the layer input x and output y (each activation uses whichever is natural). */
void pit_ref_act_forward(const struct pit_layer_spec *L, size_t n, const float *x, float *y);
void pit_ref_act_backward(const struct pit_layer_spec *L, size_t n, const float *x,
                          const float *y, const float *dy, float *dx);

/* ref_shuffle.c — PixelShuffle(r = L->k): y[b, c, h*r+i, w*r+j] = x[b, c*r*r + i*r + j, h, w].
 * backward is the inverse permutation (dx written completely). */
void pit_ref_shuffle_forward(const struct pit_layer_spec *L, int B, const float *x, float *y);
void pit_ref_shuffle_backward(const struct pit_layer_spec *L, int B, const float *dy, float *dx);

/* ref_rrdb.c — ESRGAN residual-in-residual dense block (nn/rrdb.h), F = L->in_c filters.
 * saved (pit_ref_rrdb_saved_floats): what forward keeps for backward, per dense block d
 * and sample b the concatenation [x, o1..o4] (5F, H, W), the LeakyReLU applied in place
 * on o1..o4. ws (pit_ref_rrdb_ws_floats): backward scratch. params: the network's
 * parameter array (offsets of nn/rrdb.h); dparams: its gradient array (NULL: none). */
size_t pit_ref_rrdb_saved_floats(const struct pit_layer_spec *L, int B);
size_t pit_ref_rrdb_ws_floats(const struct pit_layer_spec *L);
void pit_ref_rrdb_forward(const struct pit_layer_spec *L, int B, const float *x,
                          const float *params, float *saved, float *y);
void pit_ref_rrdb_backward(const struct pit_layer_spec *L, int B, const float *params,
                           const float *saved, const float *dy, float *dx, float *dparams,
                           float *ws);

#endif

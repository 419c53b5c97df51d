/* ref_shuffle.c — reference PixelShuffle (upscale factor r = L->k), NCHW:
 *   y[b, c, h*r + i, w*r + j] = x[b, c*r*r + i*r + j, h, w]
 * for input (B, C*r*r, H, W) and output (B, C, H*r, W*r). A pure permutation: the
 * backward gathers dy back through the same index map. */
#include "nn/ref_layers.h"

/* Calls the index pair (input index, output index) of every element. */
#define SHUFFLE_LOOP(L, B, BODY)                                                          \
  do {                                                                                    \
    const int r_ = (L)->k, C_ = (L)->o_c, H_ = (L)->in_h, W_ = (L)->in_w;                 \
    for (int b_ = 0; b_ < (B); b_++)                                                      \
      for (int c_ = 0; c_ < C_; c_++)                                                     \
        for (int i_ = 0; i_ < r_; i_++)                                                   \
          for (int j_ = 0; j_ < r_; j_++) {                                               \
            const size_t ic_ = ((size_t)b_ * C_ + c_) * r_ * r_ + (size_t)i_ * r_ + j_;   \
            for (int h_ = 0; h_ < H_; h_++)                                               \
              for (int w_ = 0; w_ < W_; w_++) {                                           \
                const size_t in = (ic_ * H_ + h_) * W_ + w_;                              \
                const size_t out = (((size_t)b_ * C_ + c_) * H_ * r_ + (size_t)h_ * r_ + i_) * \
                                       W_ * r_ +                                          \
                                   (size_t)w_ * r_ + j_;                                  \
                BODY;                                                                     \
              }                                                                           \
          }                                                                               \
  } while (0)

void pit_ref_shuffle_forward(const struct pit_layer_spec *L, int B, const float *x, float *y) {
  SHUFFLE_LOOP(L, B, y[out] = x[in]);
}

void pit_ref_shuffle_backward(const struct pit_layer_spec *L, int B, const float *dy, float *dx) {
  SHUFFLE_LOOP(L, B, dx[in] = dy[out]);
}

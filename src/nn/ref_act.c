/* ref_act.c — reference elementwise activations and their derivatives:
 *   ReLU       y = max(x, 0)           dy/dx = [y > 0]
 *   LeakyReLU  y = x > 0 ? x : a*x     dy/dx = x > 0 ? 1 : a
 *   Tanh       y = tanh x              dy/dx = 1 - y^2
 *   Sigmoid    y = 1 / (1 + e^-x)      dy/dx = y (1 - y)
 * (at x = 0 the ReLU/LeakyReLU derivative taken is PyTorch's: 0 / a). */
#include <math.h>

#include "nn/ref_layers.h"

void pit_ref_act_forward(const struct pit_layer_spec *L, size_t n, const float *x, float *y) {
  const float a = L->alpha;
  switch (L->kind) {
  case PIT_L_RELU:
    for (size_t j = 0; j < n; j++)
      y[j] = x[j] > 0.0f ? x[j] : 0.0f;
    break;
  case PIT_L_LEAKYRELU:
    for (size_t j = 0; j < n; j++)
      y[j] = x[j] > 0.0f ? x[j] : a * x[j];
    break;
  case PIT_L_TANH:
    for (size_t j = 0; j < n; j++)
      y[j] = tanhf(x[j]);
    break;
  case PIT_L_SIGMOID:
    for (size_t j = 0; j < n; j++)
      y[j] = 1.0f / (1.0f + expf(-x[j]));
    break;
  default:
    break;
  }
}

void pit_ref_act_backward(const struct pit_layer_spec *L, size_t n, const float *x,
                          const float *y, const float *dy, float *dx) {
  const float a = L->alpha;
  switch (L->kind) {
  case PIT_L_RELU:
    for (size_t j = 0; j < n; j++)
      dx[j] = y[j] > 0.0f ? dy[j] : 0.0f;
    break;
  case PIT_L_LEAKYRELU:
    for (size_t j = 0; j < n; j++)
      dx[j] = x[j] > 0.0f ? dy[j] : a * dy[j];
    break;
  case PIT_L_TANH:
    for (size_t j = 0; j < n; j++)
      dx[j] = dy[j] * (1.0f - y[j] * y[j]);
    break;
  case PIT_L_SIGMOID:
    for (size_t j = 0; j < n; j++)
      dx[j] = dy[j] * y[j] * (1.0f - y[j]);
    break;
  default:
    break;
  }
}

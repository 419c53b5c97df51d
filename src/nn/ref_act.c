/* ref_act.c — reference elementwise activations and their derivatives:
 *   ReLU       y = max(x, 0)           dy/dx = [y > 0]
 *   LeakyReLU  y = x > 0 ? x : a*x     dy/dx = x > 0 ? 1 : a
 *   Tanh       y = tanh x              dy/dx = 1 - y^2
 *   Sigmoid    y = 1 / (1 + e^-x)      dy/dx = y (1 - y)
 * (at x = 0 the ReLU/LeakyReLU derivative taken is PyTorch's: 0 / a). */
#include <math.h>

#include "nn/ref_layers.h"

/* One element: y of x. */
static float act(enum pit_layer_kind k, float a, float x) {
  switch (k) {
  case PIT_L_RELU: return x > 0.0f ? x : 0.0f;
  case PIT_L_LEAKYRELU: return x > 0.0f ? x : a * x;
  case PIT_L_TANH: return tanhf(x);
  case PIT_L_SIGMOID: return 1.0f / (1.0f + expf(-x));
  default: return x;
  }
}

/* One element: dL/dx from x, its y and dL/dy. */
static float act_grad(enum pit_layer_kind k, float a, float x, float y, float dy) {
  switch (k) {
  case PIT_L_RELU: return y > 0.0f ? dy : 0.0f;
  case PIT_L_LEAKYRELU: return x > 0.0f ? dy : a * dy;
  case PIT_L_TANH: return dy * (1.0f - y * y);
  case PIT_L_SIGMOID: return dy * y * (1.0f - y);
  default: return dy;
  }
}

static int is_act(enum pit_layer_kind k) {
  return k == PIT_L_RELU || k == PIT_L_LEAKYRELU || k == PIT_L_TANH || k == PIT_L_SIGMOID;
}

void pit_ref_act_forward(const struct pit_layer_spec *L, size_t n, const float *x, float *y) {
  if (!is_act(L->kind)) /* not an activation: y left as it is */
    return;
  for (size_t j = 0; j < n; j++)
    y[j] = act(L->kind, L->alpha, x[j]);
}

void pit_ref_act_backward(const struct pit_layer_spec *L, size_t n, const float *x,
                          const float *y, const float *dy, float *dx) {
  if (!is_act(L->kind))
    return;
  for (size_t j = 0; j < n; j++)
    dx[j] = act_grad(L->kind, L->alpha, x[j], y[j], dy[j]);
}

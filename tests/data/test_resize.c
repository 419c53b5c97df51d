/* test_resize.c — pit_resize against PIL 9.4's Image.resize on a 32-bit float ("F")
 * image, bicubic (a = -0.5, antialiased: ESRGAN's LR inputs) and bilinear, shrinking
 * and growing. Expected values printed by:
 *   a = [[((x*7+y*3)%11)/10 - 0.3*(x%2) for x in range(16)] for y in range(13)] (float32)
 *   Image.fromarray(a, 'F').resize((ow, oh), Image.BICUBIC or Image.BILINEAR)
 * (first 12 values of each result, row-major). Also: a constant image stays constant
 * (weights sum to 1), bad sizes are refused. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "pitstop/data.h"

struct want {
  int oh, ow;
  enum pit_resize_kernel k;
  float v[12];
};

int main(void) {
  enum { H = 13, W = 16 };
  float a[H * W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      a[y * W + x] = (float)((x * 7 + y * 3) % 11) / 10.0f - 0.3f * (float)(x % 2);
  static const struct want cases[] = {
      {3, 4, PIT_RESIZE_BICUBIC,
       {0.372201f, 0.334995f, 0.350708f, 0.361493f, 0.369509f, 0.348606f, 0.348509f, 0.342658f,
        0.352665f, 0.366838f, 0.338085f, 0.332555f}},
      {5, 4, PIT_RESIZE_BICUBIC,
       {0.414244f, 0.331189f, 0.313653f, 0.414189f, 0.314520f, 0.344041f, 0.396199f, 0.292242f,
        0.410914f, 0.362710f, 0.299715f, 0.388923f}},
      {26, 20, PIT_RESIZE_BICUBIC,
       {-0.043778f, 0.268391f, 0.317463f, 0.400628f, 0.781257f, 0.616728f, -0.032712f, 0.428125f,
        0.848731f, 0.132612f, 0.056212f, 0.453681f}},
      {4, 4, PIT_RESIZE_BILINEAR,
       {0.393571f, 0.328750f, 0.341625f, 0.382810f, 0.339583f, 0.367820f, 0.347433f, 0.324575f,
        0.377381f, 0.328274f, 0.364769f, 0.344133f}},
  };
  struct pit_err e = {0};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const struct want *t = &cases[c];
    float *out = malloc(sizeof(float) * (size_t)t->oh * t->ow);
    CHECK(pit_resize(a, 1, H, W, out, t->oh, t->ow, t->k, &e) == 0, "resize: %s", e.msg);
    double worst = 0;
    for (int i = 0; i < 12; i++) {
      worst = fmax(worst, fabs(out[i] - t->v[i]));
      CHECK(fabs(out[i] - t->v[i]) <= 2e-6, "%dx%d %s [%d]: %.7f, PIL %.7f", t->oh, t->ow,
            t->k == PIT_RESIZE_BICUBIC ? "bicubic" : "bilinear", i, out[i], t->v[i]);
    }
    printf("%2dx%-2d %-8s max |pitstop - PIL| = %.2e\n", t->oh, t->ow,
           t->k == PIT_RESIZE_BICUBIC ? "bicubic" : "bilinear", worst);
    free(out);
  }
  /* two channels, a constant one stays constant under the cubic's negative lobes */
  float two[2 * 8 * 8], small[2 * 2 * 2];
  for (int i = 0; i < 64; i++) {
    two[i] = 0.25f;
    two[64 + i] = (float)(i % 8);
  }
  CHECK(pit_resize(two, 2, 8, 8, small, 2, 2, PIT_RESIZE_BICUBIC, &e) == 0, "%s", e.msg);
  for (int i = 0; i < 4; i++)
    CHECK(fabsf(small[i] - 0.25f) < 1e-6f, "constant plane became %g", small[i]);
  CHECK(small[4] < small[5], "second channel lost its left-to-right ramp (%g, %g)", small[4], small[5]);
  CHECK(pit_resize(two, 1, 8, 8, small, 0, 2, PIT_RESIZE_BICUBIC, &e) == PIT_EARG, "size 0 accepted");
  return check_done();
}

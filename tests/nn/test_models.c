/* test_models.c — the built-in model specs: output shapes, parameter and state
 * counts (computed by hand below, matching PyTorch's models), offsets in
 * state_dict order, forward FLOPs, and impossible shapes rejected with a message. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "pitstop/nn.h"

static void shape(const struct pit_model_spec *m, int c, int h, int w, const char *what) {
  CHECK(m->out_c == c && m->out_h == h && m->out_w == w, "%s output %dx%dx%d, want %dx%dx%d", what,
        m->out_c, m->out_h, m->out_w, c, h, w);
}

int main(void) {
  struct pit_model_spec g, d;
  struct pit_err e = {0};

  /* cnn at 3x32x32, 10 classes:
   *   conv 3→6 k5:  6*3*25 + 6   =    456   (32→28, pool →14)
   *   conv 6→16 k5: 16*6*25 + 16 =  2,416   (14→10, pool →5)
   *   fc 400→120:   48,000 + 120 = 48,120
   *   fc 120→84:    10,080 + 84  = 10,164
   *   fc 84→10:     840 + 10     =    850   total 62,006 */
  CHECK(pit_model_build("cnn", 3, 32, 10, 0, &g, NULL, &e) == 0, "cnn: %s", e.msg);
  CHECK(g.nparams == 62006, "cnn params %zu", g.nparams);
  CHECK(g.nstate == 0, "cnn state %zu", g.nstate);
  shape(&g, 10, 1, 1, "cnn");
  CHECK(g.n == 11, "cnn layers %d", g.n);
  CHECK(g.layer[0].w_off == 0 && g.layer[0].w_len == 450 && g.layer[0].b_off == 450 &&
            g.layer[0].b_len == 6,
        "cnn conv1 offsets");
  CHECK(g.layer[3].w_off == 456 && g.layer[3].b_off == 456 + 2400, "cnn conv2 offsets");
  CHECK(g.layer[6].in_c == 16 && g.layer[6].in_h == 5 && g.layer[6].in_w == 5 &&
            g.layer[6].w_len == 48000,
        "cnn fc1 takes the flattened 16x5x5");
  CHECK(g.layer[10].b_off + g.layer[10].b_len == g.nparams, "cnn last offset");
  /* FLOPs = 2*MACs: 2*450*28*28 + 2*2400*10*10 + 2*(48000 + 10080 + 840) = 1,303,440 */
  CHECK_NEAR(g.flops_fwd, 1303440.0, 0.5, "cnn flops");

  /* cnn-wide: conv 3→64 (4,864), conv 64→16 (25,616), then as cnn: 89,614 */
  CHECK(pit_model_build("cnn-wide", 3, 32, 10, 0, &g, NULL, &e) == 0, "cnn-wide: %s", e.msg);
  CHECK(g.nparams == 89614, "cnn-wide params %zu", g.nparams);
  shape(&g, 10, 1, 1, "cnn-wide");

  /* cnn at 1x28x28 (MNIST): 156 + 2,416 + (256*120+120) + 10,164 + 850 = 44,426 */
  CHECK(pit_model_build("cnn", 1, 28, 10, 0, &g, NULL, &e) == 0, "cnn 28: %s", e.msg);
  CHECK(g.nparams == 44426, "cnn 1x28x28 params %zu", g.nparams);
  /* smallest accepted: 16 → 12 → 6 → 2 → 1 */
  CHECK(pit_model_build("cnn", 3, 16, 100, 0, &g, NULL, &e) == 0, "cnn 16: %s", e.msg);
  shape(&g, 100, 1, 1, "cnn 16x16");

  /* dcgan 64x64, nz 100:
   *   G: deconv 100→512 (819,200), BN 512 (1,024), deconv 512→256 (2,097,152), BN (512),
   *      deconv 256→128 (524,288), BN (256), deconv 128→64 (131,072), BN (128),
   *      deconv 64→3 (3,072)                                     = 3,576,704
   *   D: conv 3→64 (3,072), conv 64→128 (131,072), BN (256), conv 128→256 (524,288),
   *      BN (512), conv 256→512 (2,097,152), BN (1,024), conv 512→1 (8,192) = 2,765,568 */
  CHECK(pit_model_build("dcgan", 3, 64, 0, 100, &g, &d, &e) == 0, "dcgan: %s", e.msg);
  CHECK(g.nparams == 3576704, "dcgan G params %zu", g.nparams);
  CHECK(d.nparams == 2765568, "dcgan D params %zu", d.nparams);
  CHECK(g.nstate == 2 * (512 + 256 + 128 + 64), "dcgan G state %zu", g.nstate);
  CHECK(d.nstate == 2 * (128 + 256 + 512), "dcgan D state %zu", d.nstate);
  CHECK(g.in_c == 100 && g.in_h == 1 && g.in_w == 1, "dcgan G input");
  shape(&g, 3, 64, 64, "dcgan G");
  shape(&d, 1, 1, 1, "dcgan D");
  CHECK(pit_model_is_gan("dcgan") && !pit_model_is_gan("cnn"), "is_gan");

  /* dcgan 32x32 (one level fewer), nz 100:
   *   G: deconv 100→256 (409,600), BN 256 (512), deconv 256→128 (524,288), BN (256),
   *      deconv 128→64 (131,072), BN (128), deconv 64→3 (3,072)  = 1,068,928
   *      shapes 1 → 4 → 8 → 16 → 32
   *   D: conv 3→64 (3,072), conv 64→128 (131,072), BN (256), conv 128→256 (524,288),
   *      BN (512), conv 256→1 k4 s1 p0 (4,096)                    =   663,296
   *      shapes 32 → 16 → 8 → 4 → 1 */
  CHECK(pit_model_build("dcgan", 3, 32, 0, 100, &g, &d, &e) == 0, "dcgan 32: %s", e.msg);
  CHECK(g.nparams == 1068928, "dcgan32 G params %zu", g.nparams);
  CHECK(d.nparams == 663296, "dcgan32 D params %zu", d.nparams);
  CHECK(g.nstate == 2 * (256 + 128 + 64), "dcgan32 G state %zu", g.nstate);
  CHECK(d.nstate == 2 * (128 + 256), "dcgan32 D state %zu", d.nstate);
  shape(&g, 3, 32, 32, "dcgan32 G");
  shape(&d, 1, 1, 1, "dcgan32 D");
  CHECK(g.layer[1].kind == PIT_L_BATCHNORM && g.layer[1].s_off == 0 && g.layer[4].s_off == 512,
        "dcgan32 G state offsets (mean then var per BN)");
  /* grayscale */
  CHECK(pit_model_build("dcgan", 1, 32, 0, 64, &g, &d, &e) == 0, "dcgan 1ch: %s", e.msg);
  shape(&g, 1, 32, 32, "dcgan32 G gray");
  CHECK(d.in_c == 1, "dcgan D gray input");

  /* esrgan: parameter counts of bench/esrgan_torch.py --params (PyTorch-GAN's shapes) */
  struct pit_model_spec v;
  CHECK(pit_model_build_esrgan(3, 128, 23, 64, &g, &d, &v, &e) == 0, "esrgan: %s", e.msg);
  CHECK(g.nparams == 38549123, "esrgan G params %zu", g.nparams);
  CHECK(d.nparams == 4693697, "esrgan D params %zu", d.nparams);
  CHECK(v.nparams == 20024384, "vgg19[:35] params %zu", v.nparams);
  CHECK(v.n == 35 && v.layer[34].kind == PIT_L_CONV, "vgg19[:35] ends with conv5_4 (%d layers)", v.n);
  shape(&g, 3, 128, 128, "esrgan G");
  CHECK(g.in_h == 32 && g.in_c == 3, "esrgan G input %dx%d", g.in_c, g.in_h);
  shape(&d, 1, 8, 8, "esrgan D");
  shape(&v, 512, 8, 8, "vgg19[:35]");
  CHECK(pit_model_build_esrgan(3, 64, 2, 16, &g, &d, NULL, &e) == 0, "esrgan small: %s", e.msg);
  CHECK(g.nparams == 231923, "esrgan 2 blocks 16 filters: G params %zu", g.nparams);
  shape(&g, 3, 64, 64, "esrgan G 64");
  memset(&e, 0, sizeof e);
  CHECK(pit_model_build_esrgan(3, 100, 23, 64, &g, &d, NULL, &e) == PIT_EARG, "hr 100 accepted");
  CHECK(strstr(e.msg, "multiple of 16") != NULL, "message: %s", e.msg);
  CHECK(pit_model_build_esrgan(3, 128, 60, 64, &g, &d, NULL, &e) == PIT_EARG, "60 blocks accepted");

  /* rejected shapes and names, each with a message */
  memset(&e, 0, sizeof e);
  CHECK(pit_model_build("cnn", 3, 15, 10, 0, &g, NULL, &e) == PIT_EARG, "cnn 15x15 accepted");
  CHECK(strstr(e.msg, "15x15") && strstr(e.msg, "16x16"), "message: %s", e.msg);
  memset(&e, 0, sizeof e);
  CHECK(pit_model_build("cnn", 3, 8, 10, 0, &g, NULL, &e) == PIT_EARG, "cnn 8x8 accepted");
  memset(&e, 0, sizeof e);
  CHECK(pit_model_build("dcgan", 3, 48, 0, 100, &g, &d, &e) == PIT_EARG, "dcgan 48 accepted");
  CHECK(strstr(e.msg, "48x48") != NULL, "message: %s", e.msg);
  memset(&e, 0, sizeof e);
  CHECK(pit_model_build("dcgan", 3, 64, 0, 100, &g, NULL, &e) == PIT_EARG, "dcgan without D");
  CHECK(e.msg[0] != 0, "no message");
  memset(&e, 0, sizeof e);
  CHECK(pit_model_build("resnet", 3, 32, 10, 0, &g, NULL, &e) == PIT_ENOTFOUND, "unknown model");
  CHECK(strstr(e.msg, "resnet") && strstr(e.hint, "cnn"), "message: %s / %s", e.msg, e.hint);

  /* spec_finish directly: a conv larger than its input, a pool larger than its input */
  struct pit_model_spec m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "tiny");
  m.n = 1;
  m.layer[0] = (struct pit_layer_spec){.kind = PIT_L_CONV, .out_c = 2, .k = 5, .stride = 1};
  memset(&e, 0, sizeof e);
  CHECK(pit_model_spec_finish(&m, 1, 4, 4, &e) == PIT_EARG, "conv k5 on 4x4 accepted");
  CHECK(strstr(e.msg, "tiny") && strstr(e.msg, "conv"), "message: %s", e.msg);
  CHECK(pit_model_spec_finish(&m, 1, 4, 4, &e) == PIT_EARG && strstr(e.msg, "layer 1"),
        "message names the layer: %s", e.msg);
  m.layer[0].pad = 1; /* 4 + 2 - 5 + 1 = 2 */
  CHECK(pit_model_spec_finish(&m, 1, 4, 4, &e) == 0 && m.out_h == 2, "padded conv: %s", e.msg);
  m.layer[0] = (struct pit_layer_spec){.kind = PIT_L_MAXPOOL, .k = 2, .stride = 2};
  memset(&e, 0, sizeof e);
  CHECK(pit_model_spec_finish(&m, 1, 1, 3, &e) == PIT_EARG, "pool on 1x3 accepted");
  CHECK(strstr(e.msg, "maxpool") != NULL, "message: %s", e.msg);
  return check_done();
}

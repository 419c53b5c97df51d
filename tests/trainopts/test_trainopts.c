/* test_trainopts.c — train's option table: values parse strictly and in range;
 * the argv built from options parses back to the same options; defaults are
 * left out and model/data always given; model defaults come from one table. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "pitstop/trainopts.h"

/* Parses argv (as built by pit_train_opts_argv) into o through the table. */
static int parse_back(struct pit_train_opts *o, char **argv, int argc) {
  struct pit_err e = {0};
  for (int i = 0; i < argc; i++) {
    const struct pit_train_optdef *d = pit_train_opt_find(argv[i] + 2);
    if (!d || strncmp(argv[i], "--", 2) != 0)
      return -1;
    if (pit_train_opt_set(o, d, d->arg ? argv[++i] : NULL, &e))
      return -1;
  }
  return 0;
}

int main(void) {
  struct pit_train_opts o, back;
  struct pit_err e = {0};
  pit_train_opts_init(&o);
  const struct pit_train_optdef *bs = pit_train_opt_find("batch-size");
  CHECK(bs && pit_train_opt_set(&o, bs, "64", &e) == 0 && o.batch == 64, "batch parsed");
  CHECK(pit_train_opt_set(&o, bs, "0", &e) == PIT_EARG && strstr(e.msg, "--batch-size"), "range: %s", e.msg);
  CHECK(pit_train_opt_set(&o, bs, "8x", &e) == PIT_EARG, "trailing junk refused");
  CHECK(pit_train_opt_set(&o, pit_train_opt_find("model"), "resnet", &e) == PIT_EARG && strstr(e.msg, "resnet"),
        "unknown model refused: %s", e.msg);
  CHECK(pit_train_opt_set(&o, pit_train_opt_find("threads"), "2000", &e) == PIT_EARG, "threads > 1024 refused");
  CHECK(pit_train_opt_set(&o, pit_train_opt_find("backend"), "ref", &e) == 0 && o.backend == PIT_BACKEND_REF, "backend");
  CHECK(pit_train_opt_set(&o, pit_train_opt_find("no-validation"), NULL, &e) == 0 && o.validate == 0, "flag");
  CHECK(pit_train_opt_set(&o, pit_train_opt_find("lr"), "0.1", &e) == 0 && o.lr == 0.1, "lr");
  CHECK(pit_train_opt_set(&o, pit_train_opt_find("seed"), "12345678901", &e) == 0 && o.seed == 12345678901ULL, "seed");
  o.data = "synthetic";
  o.max_iters = 20;
  o.epochs = 0;
  o.itype = "c5.xlarge";
  char **argv;
  int argc;
  CHECK(pit_train_opts_argv(&o, &argv, &argc, &e) == 0, "%s", e.msg);
  char line[1024] = "";
  for (int i = 0; i < argc; i++)
    snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", i ? " " : "", argv[i]);
  CHECK(strcmp(line, "--model cnn --data synthetic --batch-size 64 --max-iters 20 --lr 0.1 --seed 12345678901 "
                     "--no-validation --itype c5.xlarge --backend ref") == 0,
        "argv: '%s'", line);
  pit_train_opts_init(&back);
  back.epochs = 0; /* what train does when --max-iters comes alone */
  CHECK(parse_back(&back, argv, argc) == 0, "parses back");
  for (const struct pit_train_optdef *d = pit_train_optdefs; d->name; d++) {
    char a[64], b[64];
    if (d->kind == PIT_TOPT_STR) {
      const char *x = *(const char **)((char *)&o + d->off), *y = *(const char **)((char *)&back + d->off);
      CHECK((!x && !y) || (x && y && strcmp(x, y) == 0), "--%s round trip", d->name);
    } else {
      memcpy(a, (char *)&o + d->off, 8);
      memcpy(b, (char *)&back + d->off, 8);
      CHECK(memcmp(a, b, d->kind == PIT_TOPT_INT || d->kind == PIT_TOPT_OFF || d->kind == PIT_TOPT_BACKEND ? 4 : 8) == 0,
            "--%s round trip", d->name);
    }
  }
  pit_train_argv_free(argv);
  CHECK(pit_train_check(&o, &e) == 0, "valid: %s", e.msg);
  o.momentum = 1.5; /* set by code, not parsed: the table still checks it */
  CHECK(pit_train_check(&o, &e) == PIT_EARG && strstr(e.msg, "--momentum"), "checked: %s", e.msg);
  o.momentum = -1;
  o.data = "images";
  CHECK(pit_train_check(&o, &e) == PIT_EARG, "images need --data-dir");
  const struct pit_train_model *m = pit_train_model_find("dcgan");
  CHECK(m && m->gan && m->batch == 64 && strcmp(m->optimizer, "adam") == 0 && m->lr_adam == 2e-4, "dcgan defaults");
  m = pit_train_model_find("cnn");
  CHECK(m && !m->gan && m->batch == 8 && m->lr_sgd == 0.005 && m->momentum == 0.9, "cnn defaults");
  CHECK(pit_train_model_find("nope") == NULL, "unknown model");
  return check_done();
}

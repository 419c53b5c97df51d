/* cmd_train.c — `pitstop train`: options → struct pit_train_opts → pit_train_run,
 * alone or under mpirun. Only this file prints: the progress line (stderr, on a
 * terminal), the result line, and errors as "pitstop: ..." (a rank other than 0
 * names itself and its host). SIGUSR1 asks for a stop at the next iteration
 * boundary (after a checkpoint if --out is set): the elastic protocol's signal. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/dist.h"
#include "pitstop/train.h"

static const char USAGE[] =
    "usage: pitstop train [options]      (data-parallel: mpirun -np N pitstop train ...)\n"
    "  --model cnn|cnn-wide|dcgan   model (default cnn)\n"
    "  --data fashion-mnist|cifar10|images|synthetic   dataset (default fashion-mnist)\n"
    "  --data-dir DIR               dataset directory (default: the kind's own)\n"
    "  --batch-size B               GLOBAL batch, over all ranks (default: cnn 8, dcgan 64)\n"
    "  --epochs E                   epochs (default 1)\n"
    "  --max-iters N                stop after N iterations in all (alone: whatever epochs it takes)\n"
    "  --lr X  --optimizer sgd|adam  --momentum M   (cnn: sgd 0.005 m 0.9; dcgan: adam 2e-4 b1 0.5)\n"
    "  --lr-schedule constant|cosine   (default: cnn cosine over the planned iterations, dcgan constant)\n"
    "  --seed S                     seed of initialisation, shuffling and noise (default 1)\n"
    "  --threads T                  threads per rank (default: the CPUs the rank may use: affinity, cgroup quota)\n"
    "  --image-size N               resize images to NxN (dcgan: 64 or 32; default 64)\n"
    "  --limit N                    use only the first N training samples\n"
    "  --no-validation              skip the test-set accuracy after each epoch\n"
    "  --events FILE|-              JSON Lines records (- = stdout, then nothing else goes there)\n"
    "  --db PATH                    store the records in this SQLite store\n"
    "  --run ID                     run id (default: model-date-pid)\n"
    "  --itype NAME                 instance-type label for the configuration\n"
    "  --out DIR                    checkpoints and sample grids go here\n"
    "  --checkpoint-every N         checkpoint every N iterations (needs --out)\n"
    "  --resume CKPT                continue from a checkpoint (any number of ranks)\n"
    "  --sample-interval N          dcgan: sample grid every N iterations\n"
    "  --batch-shares equal|auto|w1,w2,...   split of the global batch among ranks\n"
    "  --rebalance-every K          auto shares: rebalance every K iterations (default 10)\n"
    "  --check-sync N               compare parameter checksums across ranks every N iterations\n"
    "  --backend fast|ref           kernels: oneDNN (fast) or the plain C reference\n"
    "  --quiet                      no progress line\n";

static void on_usr1(int sig) {
  (void)sig;
  pit_train_request_stop();
}

static void print_warning(void *ctx, const char *msg) {
  (void)ctx;
  fprintf(stderr, "pitstop: warning: %s\n", msg);
}

static int num(const char *opt, const char *v, int64_t *out) {
  if (pit_parse_i64(v, out) < 0) {
    pit_cli_usage("--%s expects a whole number, not '%s'", opt, v);
    return -1;
  }
  return 0;
}

int pit_cmd_train(int argc, char **argv) {
  struct pit_train_opts o;
  pit_train_opts_init(&o);
  enum {
    O_MODEL = 256, O_DATA, O_DATADIR, O_BATCH, O_EPOCHS, O_MAXIT, O_LR, O_OPT, O_MOM, O_SEED,
    O_THREADS, O_IMG, O_LIMIT, O_NOVAL, O_EVENTS, O_DB, O_RUN, O_ITYPE, O_OUT, O_CKPT, O_RESUME,
    O_SAMPLE, O_SHARES, O_REBAL, O_SYNC, O_BACKEND, O_QUIET, O_HELP, O_SCHED
  };
  static const struct option opts[] = {
      {"model", required_argument, 0, O_MODEL},       {"data", required_argument, 0, O_DATA},
      {"data-dir", required_argument, 0, O_DATADIR},  {"batch-size", required_argument, 0, O_BATCH},
      {"epochs", required_argument, 0, O_EPOCHS},     {"max-iters", required_argument, 0, O_MAXIT},
      {"lr", required_argument, 0, O_LR},             {"optimizer", required_argument, 0, O_OPT},
      {"momentum", required_argument, 0, O_MOM},      {"seed", required_argument, 0, O_SEED},
      {"threads", required_argument, 0, O_THREADS},   {"image-size", required_argument, 0, O_IMG},
      {"limit", required_argument, 0, O_LIMIT},       {"no-validation", no_argument, 0, O_NOVAL},
      {"events", required_argument, 0, O_EVENTS},     {"db", required_argument, 0, O_DB},
      {"run", required_argument, 0, O_RUN},           {"itype", required_argument, 0, O_ITYPE},
      {"out", required_argument, 0, O_OUT},           {"checkpoint-every", required_argument, 0, O_CKPT},
      {"resume", required_argument, 0, O_RESUME},     {"sample-interval", required_argument, 0, O_SAMPLE},
      {"batch-shares", required_argument, 0, O_SHARES}, {"rebalance-every", required_argument, 0, O_REBAL},
      {"check-sync", required_argument, 0, O_SYNC},   {"backend", required_argument, 0, O_BACKEND},
      {"lr-schedule", required_argument, 0, O_SCHED},
      {"quiet", no_argument, 0, O_QUIET},             {"help", no_argument, 0, O_HELP},
      {0, 0, 0, 0}};
  int quiet = 0, epochs_set = 0, c;
  int64_t v;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case O_MODEL: o.model = optarg; break;
    case O_DATA: o.data = optarg; break;
    case O_DATADIR: o.data_dir = optarg; break;
    case O_BATCH:
      if (num("batch-size", optarg, &o.batch))
        return 2;
      if (o.batch <= 0)
        return pit_cli_usage("--batch-size must be a positive number, not '%s'", optarg);
      break;
    case O_EPOCHS: if (num("epochs", optarg, &o.epochs)) return 2; epochs_set = 1; break;
    case O_MAXIT: if (num("max-iters", optarg, &o.max_iters)) return 2; break;
    case O_LR:
      if (pit_parse_f64(optarg, &o.lr) < 0 || !(o.lr > 0))
        return pit_cli_usage("--lr expects a positive number, not '%s'", optarg);
      break;
    case O_OPT: o.optimizer = optarg; break;
    case O_MOM:
      if (pit_parse_f64(optarg, &o.momentum) < 0 || !(o.momentum >= 0 && o.momentum < 1))
        return pit_cli_usage("--momentum expects a number in [0, 1), not '%s'", optarg);
      break;
    case O_SEED:
      if (num("seed", optarg, &v)) return 2;
      o.seed = (uint64_t)v;
      break;
    case O_THREADS: if (num("threads", optarg, &v)) return 2; o.threads = (int)v; if (v < 0 || v > 1024) o.threads = -1; break;
    case O_IMG: if (num("image-size", optarg, &v)) return 2; o.image_size = v < 0 || v > 4096 ? -1 : (int)v; break;
    case O_LIMIT: if (num("limit", optarg, &o.limit)) return 2; break;
    case O_NOVAL: o.validate = 0; break;
    case O_EVENTS: o.events = optarg; break;
    case O_DB: o.db = optarg; break;
    case O_RUN: o.run = optarg; break;
    case O_ITYPE: o.itype = optarg; break;
    case O_OUT: o.out = optarg; break;
    case O_CKPT: if (num("checkpoint-every", optarg, &o.checkpoint_every)) return 2; break;
    case O_RESUME: o.resume = optarg; break;
    case O_SAMPLE: if (num("sample-interval", optarg, &o.sample_interval)) return 2; break;
    case O_SHARES: o.batch_shares = optarg; break;
    case O_REBAL: if (num("rebalance-every", optarg, &v)) return 2; o.rebalance_every = v > 0 && v < 1000000 ? (int)v : -1; break;
    case O_SYNC: if (num("check-sync", optarg, &o.check_sync)) return 2; break;
    case O_BACKEND:
      if (strcmp(optarg, "fast") == 0)
        o.backend = PIT_BACKEND_FAST;
      else if (strcmp(optarg, "ref") == 0)
        o.backend = PIT_BACKEND_REF;
      else
        return pit_cli_usage("--backend is fast or ref, not '%s'", optarg);
      break;
    case O_QUIET: quiet = 1; break;
    case O_SCHED: o.lr_schedule = optarg; break;
    case O_HELP: fputs(USAGE, stdout); return 0;
    default:
      return pit_cli_usage("train: unknown option '%s' (pitstop train --help lists them)",
                           argv[optind - 1]);
    }
  }
  if (optind < argc)
    return pit_cli_usage("train: unexpected argument '%s'", argv[optind]);
  if (o.max_iters > 0 && !epochs_set)
    o.epochs = 0; /* --max-iters alone: as many epochs as it takes */

  struct pit_err err;
  pit_err_clear(&err);
  if (pit_train_check(&o, &err) < 0) /* before MPI: a typo fails fast, once per rank */
    return pit_cli_fail(&err);
  signal(SIGUSR1, on_usr1); /* before start-up: an early stop request must not kill the rank */
  struct pit_dist d;
  if (pit_dist_init(&d, &argc, &argv, &err) < 0)
    return pit_cli_fail(&err);
  o.progress = !quiet && d.rank == 0 && isatty(2);
  signal(SIGUSR1, on_usr1); /* again, in case MPI start-up installed its own */

  o.warn = print_warning;
  struct pit_train_result res;
  int rc = pit_train_run(&o, &d, &res, &err);
  int status = 0;
  if (rc < 0) {
    if (d.size > 1) {
      char keep[sizeof err.msg], host[64];
      snprintf(keep, sizeof keep, "%.400s", err.msg);
      snprintf(host, sizeof host, "%.60s", d.host);
      snprintf(err.msg, sizeof err.msg, "rank %d (%s): %.400s", d.rank, host, keep);
    }
    status = pit_cli_fail(&err);
  } else if (d.rank == 0) {
    FILE *f = o.events && strcmp(o.events, "-") == 0 ? stderr : stdout;
    double sps = res.train_s > 0 ? (double)res.samples / res.train_s : 0;
    fprintf(f, "run %s%s: %s on %s, %lld iterations, %lld epoch(s), %.1f s, %.0f samples/s", res.run,
            res.gen ? " (resumed)" : "", o.model, o.data, (long long)res.steps, (long long)res.epochs_done,
            res.train_s, sps);
    if (isfinite(res.accuracy))
      fprintf(f, ", test accuracy %.4f", res.accuracy);
    if (isfinite(res.loss_g))
      fprintf(f, ", loss D %.4f G %.4f", res.loss, res.loss_g);
    else if (isfinite(res.loss))
      fprintf(f, ", loss %.4f", res.loss);
    fputc('\n', f);
    if (res.samples_png[0])
      fprintf(f, "samples: %s\n", res.samples_png);
    if (res.checkpoint[0])
      fprintf(f, "checkpoint: %s\n", res.checkpoint);
    if (res.stopped)
      fprintf(f, "stopped on request; continue with --resume %s\n",
              res.checkpoint[0] ? res.checkpoint : "(no --out: no checkpoint)");
  }
  if (status == 0 || d.size <= 1)
    pit_dist_release(&d);
  return status;
}

/* cmd_train.c — `pitstop train`: options → struct pit_train_opts → pit_train_run,
 * alone or under mpirun. Only this file prints: the progress line (stderr, on a
 * terminal), the result line, and errors as "pitstop: ..." (a rank other than 0
 * names itself and its host). SIGUSR1 asks for a stop at the next iteration
 * boundary (after a checkpoint if --out is set): the elastic protocol's signal.
 * It is blocked in every thread before MPI and oneDNN start theirs (they
 * inherit the mask) and taken synchronously at each iteration's start
 * (take_usr1): oneDNN's generated GEMM kernels point rsp into the heap, so a
 * signal delivered while one runs writes its frame there (oneDNN issue 4845,
 * fixed upstream in 2026; Debian 12's 2.6.3 has it). A stop then aborted a
 * rank in "free(): invalid pointer" in 7 of 8 single-process SIGUSR1 storms
 * and in 1 of 6 live resizes under load (tests/train/stop_signal.sh). The handler stays installed:
 * the controller finds the processes that catch SIGUSR1 (/proc SigCgt), and a
 * thread that unblocks it still only sets a flag. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/dist.h"
#include "pitstop/nn.h"
#include "pitstop/train.h"

static void usage(FILE *f) {
  fputs("usage: pitstop train [options]      (data-parallel: mpirun -np N pitstop train ...)\n", f);
  pit_train_opts_help(f);
  fputs("  --quiet                      no progress line\n"
        "  --version                    the version and the instruction sets this CPU runs\nmodels:\n", f);
  pit_train_models_help(f);
}

static void fmt_dur(char *buf, size_t n, double s) {
  if (!(s >= 0) || !isfinite(s))
    snprintf(buf, n, "?");
  else if (s < 60)
    snprintf(buf, n, "%.0fs", s);
  else if (s < 3600)
    snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
  else
    snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* Draws the library's progress reports on stderr: one line redrawn in place,
 * ended at each epoch's end, and the test accuracy after it. */
static void draw_progress(void *ctx, const struct pit_train_progress *p) {
  (void)ctx;
  if (p->event == PIT_TRAIN_EPOCH_ACCURACY) {
    fprintf(stderr, "epoch %lld: test accuracy %.4f (%.1f s)\n", (long long)p->epoch + 1, p->accuracy, p->epoch_s);
    return;
  }
  char eta[32], ep[48];
  fmt_dur(eta, sizeof eta, p->eta_s);
  if (p->epochs > 0)
    snprintf(ep, sizeof ep, "epoch %lld/%lld", (long long)p->epoch + 1, (long long)p->epochs);
  else
    snprintf(ep, sizeof ep, "epoch %lld", (long long)p->epoch + 1);
  fprintf(stderr, "\r\033[K%s  iter %lld/%lld  step %lld  %.0f samples/s  loss %.4f  ETA %s", ep,
          (long long)p->iter + 1, (long long)p->epoch_iters, (long long)p->step, p->samples_per_s, p->loss_ema, eta);
  if (p->final)
    fputc('\n', stderr);
  fflush(stderr);
}

static void on_usr1(int sig) {
  (void)sig;
  pit_train_request_stop();
}

/* A SIGUSR1 pending (blocked since start-up): taken, and 1. */
static int take_usr1(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  const struct timespec zero = {0, 0};
  int got = 0, sig;
  while ((sig = sigtimedwait(&set, NULL, &zero)) == SIGUSR1 || (sig < 0 && errno == EINTR))
    got |= sig == SIGUSR1; /* (pending, it is one however often it was sent) */
  return got;
}

/* Warnings: a checkpoint skipped by --resume auto (corrupted), more threads than CPUs. */
static void on_warn(void *ctx, const struct pit_err *e) {
  (void)ctx;
  pit_cli_warn("%s%s%s", e->msg, e->hint[0] ? "; " : "", e->hint);
}

int pit_cmd_train(int argc, char **argv) {
  struct pit_train_opts o;
  pit_train_opts_init(&o);
  /* getopt's table from train's option table (trainopts.h), plus --quiet and --help */
  enum { N_TRAIN = 64 };
  struct option opts[N_TRAIN + 4];
  int n = 0;
  for (const struct pit_train_optdef *d = pit_train_optdefs; d->name && n < N_TRAIN; d++, n++)
    opts[n] = (struct option){d->name, d->arg ? required_argument : no_argument, 0, n};
  const int O_QUIET = n, O_HELP = n + 1, O_VERSION = n + 2;
  opts[n] = (struct option){"quiet", no_argument, 0, O_QUIET};
  opts[n + 1] = (struct option){"help", no_argument, 0, O_HELP};
  opts[n + 2] = (struct option){"version", no_argument, 0, O_VERSION};
  opts[n + 3] = (struct option){0, 0, 0, 0};
  struct pit_err err;
  pit_err_clear(&err);
  int quiet = 0, epochs_set = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == O_QUIET) {
      quiet = 1;
    } else if (c == O_HELP) {
      usage(stdout);
      return 0;
    } else if (c == O_VERSION) { /* the instruction sets this binary runs here (src/nn/isa.c) */
      printf("pitstop 0.1.0\nisa: pitstop %s, oneDNN %s\n", pit_nn_isa_name(pit_nn_isa()), pit_nn_dnnl_isa());
      return 0;
    } else if (c >= 0 && c < n) {
      if (pit_train_opt_set(&o, &pit_train_optdefs[c], optarg, &err))
        return pit_cli_usage("%s", err.msg);
      epochs_set |= pit_train_optdefs[c].off == offsetof(struct pit_train_opts, epochs);
    } else {
      return pit_cli_usage("train: unknown option '%s' (pitstop train --help lists them)", argv[optind - 1]);
    }
  }
  if (optind < argc)
    return pit_cli_usage("train: unexpected argument '%s'", argv[optind]);
  if (o.max_iters > 0 && !epochs_set)
    o.epochs = 0; /* --max-iters alone: as many epochs as it takes */

  o.warn = on_warn;
  if (pit_train_check(&o, &err) < 0) /* before MPI: a typo fails fast, once per rank */
    return pit_cli_fail(&err);
  signal(SIGUSR1, on_usr1); /* before start-up: an early stop request must not kill the rank */
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* before MPI's threads and oneDNN's: they inherit it */
  o.stop_poll = take_usr1;
  struct pit_dist d;
  if (pit_dist_init(&d, &argc, &argv, &err) < 0)
    return pit_cli_fail(&err);
  if (!quiet && d.rank == 0 && isatty(2))
    o.progress = draw_progress;
  signal(SIGUSR1, on_usr1); /* again, in case MPI start-up installed its own */

  struct pit_train_result res;
  struct pit_train_keep kept; /* the data, read once for every generation this process runs */
  memset(&kept, 0, sizeof kept);
  int rc = pit_train_run_keep(&o, &d, &kept, &res, &err);
  /* stopped for a resize that only removes ranks: the controller may ask the
   * ranks that stay to go on in place from the checkpoint just written, while
   * the others leave (docs/protocol.md "In-place shrink") */
  char resume[sizeof res.checkpoint];
  while (rc == 0 && res.stopped == 1) {
    int stay = 1, got = pit_train_shrink_request(getenv("PITSTOP_SHRINK"), &d, &res, &stay, resume, sizeof resume, &err);
    if (got <= 0) {
      rc = got;
      break;
    }
    if ((rc = pit_dist_shrink(&d, stay, &err)) < 0)
      break;
    if (rc == 1) { /* this rank leaves: its records are out; MPI_Finalize would wait for the others */
      fflush(NULL);
      _exit(0);
    }
    /* a SIGUSR1 that came after the stop was taken (during the checkpoint and the split) was a
     * second copy of it (mpirun's forward of a signal the ranks got too, as the controller sent
     * it until 2026-11-29 and a user's `kill` to the group still does): the controller asks the
     * next generation only once it has read its init record and iterations. Taken and dropped
     * here, the one place before a next generation, else that generation stopped at its first
     * step (3 of 5 runs of bench/decide-hetero's policy ran a 1-step generation 1 and a relaunch). */
    (void)take_usr1();
    o.resume = resume;
    o.t_process_start = pit_now(); /* this generation's start: its init_s and clock (t goes on from the checkpoint) */
    rc = pit_train_run_keep(&o, &d, &kept, &res, &err);
  }
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
    if (isfinite(res.psnr))
      fprintf(f, ", validation PSNR %.2f dB (bicubic %.2f dB)", res.psnr, res.psnr_bicubic);
    else if (isfinite(res.loss))
      fprintf(f, ", loss %.4f", res.loss);
    fputc('\n', f);
    if (res.samples_png[0])
      fprintf(f, "samples: %s\n", res.samples_png);
    if (res.checkpoint[0])
      fprintf(f, "checkpoint: %s\n", res.checkpoint);
    if (res.stopped == 2)
      fprintf(f, "stopped by --until-steady (%s)\n", res.stop_why);
    else if (res.stopped)
      fprintf(f, "stopped on request; continue with --resume %s\n",
              res.checkpoint[0] ? res.checkpoint : "(no --out: no checkpoint)");
  }
  pit_train_keep_release(&kept);
  if (status == 0 || d.size <= 1)
    pit_dist_release(&d);
  return status;
}

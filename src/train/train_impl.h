/* train_impl.h — private state of one training run, shared by the files of the
 * train module (train.c: set-up and the loop; step.c: one iteration of a
 * classifier or a GAN and validation; emit.c: records, store and progress reports;
 * shares.c: batch shares). Not installed. */
#ifndef PIT_TRAIN_IMPL_H
#define PIT_TRAIN_IMPL_H

#include "pitstop/data.h"
#include "pitstop/store.h"
#include "pitstop/train.h"

#define PIT_NZ 100          /* DCGAN latent size */
#define PIT_GRID_N 64       /* samples in a GAN grid (8 x 8) */

struct tr_esrgan; /* esrgan.c */

struct trainer {
  const struct pit_train_opts *o;
  struct pit_dist *d;
  struct pit_train_keep *keep;    /* NULL, or datasets this process read before and reads again at the end */
  int gan;
  int esrgan;                     /* model esrgan (gan is 1 too) */
  struct tr_esrgan *sr;           /* esrgan's own state (esrgan.c); owned, NULL for other models */
  char run[PIT_NAME_MAX];
  char outdir[1024];              /* --out, or runs/<run> for a GAN's samples; "" none */
  char resume[1024];              /* checkpoint this generation resumes from ("auto" resolved); "" none */
  int64_t ckpt_prev;              /* step of the checkpoint last saved or resumed from (kept by the
                                     rotation), -1 none */
  int gen;
  uint64_t seed;

  struct pit_model_spec spec[2]; /* classifier: [0]; GAN: [0] generator, [1] discriminator */
  struct pit_net *net[2];
  struct pit_optim opt[2];
  int nnets;
  int classes, in_c, size;       /* data shape the model was built for */

  struct pit_dataset train, test;
  struct pit_sampler smp;
  int64_t B;                      /* global batch */
  int64_t epochs;                 /* epochs to run (0: until max_iters) */

  /* batch shares */
  int auto_shares;
  double *weights;                /* (size) relative speed weights */
  int64_t *shares;                /* (size) samples of the current global batch per rank */
  double *win_c;                  /* (size) auto: compute seconds summed over the window */
  double *win_n;                  /* (size) auto: samples summed over the window */
  double *speed;                  /* (size) auto: relative speeds of a rebalance (scratch) */
  int64_t *cand;                  /* (2 size) auto: shares a rebalance would give, current shares */
  int win_k;
  int win_skip;                   /* auto: the next step runs on new shares (builds plans): not measured */
  char *dec_detail;               /* auto: a rebalance's decision record (JSON), written after the pending iter */
  double dec_t;

  /* --until-steady: the paramount iteration times so far, as pitstop predict
   * takes them from the records (train.c, steady_check) */
  double *steady_x;               /* (steady_cap) owned */
  int64_t steady_n;
  double iter_t, iter_t_prev;     /* t of the last two iteration records (0: none yet) */
  int steady_skip;                /* the next interval follows a checkpoint or a sample grid */
  double steady_pend;             /* the current iteration's interval, counted at the next check (0: none) */
  int64_t steady_next;            /* the step of the next --until-steady check (0: step 10); rank 0
                                     chooses it, every rank learns it with the verdict */
  size_t steady_cap;
  char *end_detail;               /* JSON for the end record's detail, owned; NULL none */

  /* buffers */
  size_t sample_floats;           /* c*h*w */
  float *x;                       /* (B, C, H, W) this rank's real samples */
  int32_t *y;                     /* (B) labels */
  float *z;                       /* (B, nz) GAN noise */
  float *fake;                    /* (B, C, H, W) generated images */
  float *dfake;                   /* (B, C, H, W) gradient w.r.t. fake */
  float *dout;                    /* (B, K) or (B) loss gradient */
  int64_t *gidx;                  /* (B) global sample indexes of this rank's slice */
  double *all_c, *all_w;          /* (size) every rank's compute / wait of a reduction */
  double *sum_c, *sum_w;          /* (size) this iteration's compute, and the waits of its
                                     reductions known so far (all but the last one's) */
  int nred;                       /* reductions done in the current iteration */
  int have_pending;               /* pend holds the previous iteration's record, waiting for
                                     the wait of its last reduction (dist.h) */
  int discard_carry;              /* pend was flushed: the next reduction's carried waits are known */
  struct pit_record pend;

  /* progress */
  int64_t step;                   /* iterations done, in all generations */
  int64_t step0;                  /* step at the start of this generation */
  double t_gen0;                  /* pit_now() at generation start */
  double t_off;                   /* record time of the generation start */
  double t_first;                 /* pit_now() at the first iteration */
  int64_t samples;                /* this generation */

  /* sinks (rank 0) */
  int have_ev;
  struct pit_events ev;
  struct pit_store *store;
  struct pit_record rec;
  double last_draw;
  double last_flush;
  double loss_ema;
  int64_t epoch_iters;           /* iterations per epoch */
};

/* emit.c */
double tr_time(const struct trainer *t);
int tr_emit(struct trainer *t, struct pit_record *r, struct pit_err *e);
int tr_sinks_open(struct trainer *t, int append, struct pit_err *e);
/* --until-steady at iteration it (steady.c): *stop set once the times are steady or capped. */
int tr_steady_check(struct trainer *t, int64_t it, double step_s, int event, int64_t planned, int *stop,
                    struct pit_train_result *res, struct pit_err *e);
int tr_sinks_close(struct trainer *t, int ok, struct pit_err *e);
/* Reports progress to o->progress (rank 0; throttled unless final). */
void tr_progress(struct trainer *t, int64_t epoch, int64_t iter, double loss, int final);
/* Reports a classifier's test accuracy at an epoch's end. */
void tr_progress_accuracy(struct trainer *t, int64_t epoch, double accuracy, double epoch_s);

/* shares.c */
int tr_shares_init(struct trainer *t, struct pit_err *e);
/* Shares of a global batch of `count` samples for this iteration. */
void tr_shares_for(struct trainer *t, int64_t count);
/* After an iteration: feed every rank's compute time; rebalance if due. */
void tr_shares_observe(struct trainer *t, const double *all_compute);

/* step.c: pieces of an iteration shared with esrgan.c. begin: clears the sums, gathers
 * this rank's slice [*off, *off + *len) (and its inputs); reduce: SUM-allreduces net's
 * gradients (and v[0..nv)) recording compute and wait; update: optimizer step of net i. */
int tr_begin_step(struct trainer *t, const int64_t *idx, int64_t count, int64_t *off, int64_t *len,
                  int noise, double *t1, double *data_s, struct pit_err *e);
int tr_reduce(struct trainer *t, struct pit_net *net, double compute, double *v, int nv,
              struct pit_err *e);
void tr_update(struct trainer *t, int i);

/* esrgan.c: ESRGAN's data, nets, iteration, validation and sample grid (see its header). */
void tr_esrgan_data_opts(const struct trainer *t, struct pit_data_opts *dopt);
int tr_esrgan_build(struct trainer *t, struct pit_err *e);
int tr_esrgan_inputs(struct trainer *t, int64_t off, int64_t len, struct pit_err *e);
int tr_step_esrgan(struct trainer *t, const int64_t *idx, int64_t count, double *data_s,
                   int stop_in, int *stop_out, struct pit_err *e);
void tr_esrgan_losses(const struct trainer *t, struct pit_record *r);
double tr_esrgan_loss_d(const struct trainer *t);
double tr_esrgan_loss_g(const struct trainer *t);
int tr_esrgan_validate(struct trainer *t, double *psnr_model, double *psnr_bicubic, struct pit_err *e);
int tr_esrgan_grid(struct trainer *t, const char *path, struct pit_err *e);
void tr_esrgan_free(struct trainer *t);

/* step.c: one iteration. On return *loss (and *loss_g for a GAN) are the
 * global losses, t->sum_c / t->sum_w every rank's compute and wait. stop_in is
 * this rank's stop request; *stop_out is 1 if any rank asked to stop. */
int tr_step_classifier(struct trainer *t, const int64_t *idx, int64_t count, double *loss,
                       double *data_s, int stop_in, int *stop_out, struct pit_err *e);
int tr_step_gan(struct trainer *t, const int64_t *idx, int64_t count, double *loss_d,
                double *loss_g, double *data_s, int stop_in, int *stop_out, struct pit_err *e);
/* Test accuracy over the whole test set, split among ranks. */
int tr_validate(struct trainer *t, double *acc, struct pit_err *e);
/* GAN: generator on the fixed grid noise → PNG in out. */
int tr_sample_grid(struct trainer *t, const char *path, struct pit_err *e);

#endif

/* test_parse_kv.c — the parser on dialects no named format knows and on glued
 * lines (docs/parse.md, "Any dialect" and "Glued lines"): a key/value dialect
 * written for this test in several styles gives exact iterations, times and
 * epochs; the progress-only lines the three client scripts print (copied here as
 * literal strings) give progress records; lines of two ranks glued on one line
 * give both records; a line cut by another is counted and reported; --pattern;
 * the explanation of every part of a line. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/parse.h"

#define MAXREC 64
#define MAXPART 64

struct col {
  struct pit_record r[MAXREC];
  int n;
  char warn[8][512];
  int nw;
  struct {
    long line;
    int part, use, epoch_start;
    char reader[16], why[96], info[96];
  } x[MAXPART];
  int nx;
};

static int emit(void *ctx, const struct pit_record *r, struct pit_err *e) {
  (void)e;
  struct col *c = ctx;
  if (c->n < MAXREC && pit_record_copy(&c->r[c->n], r) == 0)
    c->n++;
  return 0;
}

static void warn(void *ctx, const struct pit_err *w) {
  struct col *c = ctx;
  if (c->nw < 8)
    snprintf(c->warn[c->nw++], sizeof c->warn[0], "%s", w->msg);
}

static void explain(void *ctx, const struct pit_parse_part *x) {
  struct col *c = ctx;
  if (c->nx >= MAXPART)
    return;
  c->x[c->nx].line = x->line;
  c->x[c->nx].part = x->part;
  c->x[c->nx].use = (int)x->use;
  c->x[c->nx].epoch_start = x->epoch_start;
  snprintf(c->x[c->nx].reader, sizeof c->x[0].reader, "%s", x->reader ? x->reader : "-");
  snprintf(c->x[c->nx].why, sizeof c->x[0].why, "%s", x->why);
  snprintf(c->x[c->nx].info, sizeof c->x[0].info, "%s", x->info);
  c->nx++;
}

static void col_free(struct col *c) {
  for (int i = 0; i < c->n; i++)
    pit_record_release(&c->r[i]);
  memset(c, 0, sizeof *c);
}

/* Parses text (lines split at '\n') as file "log.txt", run "r", format f; a
 * pattern and a batch size per rank (-1 none) if given. */
static struct pit_parse_stats parse_with(const char *text, enum pit_parse_format f, const char *pattern,
                                         int64_t batch, struct col *c) {
  col_free(c);
  struct pit_parser *p = NULL;
  struct pit_err e = {0};
  struct pit_parse_stats st = {0};
  if (pit_parser_new(&p, f, "r", 0, "log.txt", emit, warn, c, &e)) {
    CHECK(0, "pit_parser_new: %s", e.msg);
    return st;
  }
  pit_parser_set_explain(p, explain, c);
  if (pattern)
    CHECK(pit_parser_set_pattern(p, pattern, &e) == 0, "pattern: %s", e.msg);
  if (batch > 0)
    CHECK(pit_parser_set_batch(p, batch, &e) == 0, "batch: %s", e.msg);
  const char *s = text;
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    CHECK(pit_parser_line(p, s, n, &e) == 0, "line error: %s", e.msg);
    s += n + (nl ? 1 : 0);
  }
  CHECK(pit_parser_finish(p, &e) == 0, "finish: %s", e.msg);
  st = *pit_parser_stats(p);
  pit_parser_free(p);
  return st;
}

static struct pit_parse_stats parse(const char *text, struct col *c) {
  return parse_with(text, PIT_PARSE_AUTO, NULL, -1, c);
}

#define EQ(a, b) CHECK((a) == (b), "%s = %.17g, want %.17g", #a, (double)(a), (double)(b))
#define ABSENT(a) CHECK(isnan(a), "%s = %.17g, want absent", #a, (double)(a))

/* An iteration record with these values (-1: absent; step_s NaN: progress only). */
static void iter_is(const struct col *c, int i, int rank, int64_t epoch, int64_t iter, int64_t step, double step_s) {
  if (i >= c->n) {
    CHECK(0, "record %d missing (%d records)", i, c->n);
    return;
  }
  const struct pit_record *r = &c->r[i];
  CHECK(r->type == PIT_REC_ITER, "record %d: type %d, want iter", i, (int)r->type);
  CHECK(r->rank == rank, "record %d: rank %d, want %d", i, r->rank, rank);
  CHECK(r->epoch == epoch, "record %d: epoch %lld, want %lld", i, (long long)r->epoch, (long long)epoch);
  CHECK(r->iter == iter, "record %d: iter %lld, want %lld", i, (long long)r->iter, (long long)iter);
  CHECK(r->step == step, "record %d: step %lld, want %lld", i, (long long)r->step, (long long)step);
  if (isnan(step_s))
    CHECK(isnan(r->step_s), "record %d: step_s %.17g, want none (progress only)", i, r->step_s);
  else
    CHECK(r->step_s == step_s, "record %d: step_s %.17g, want %.17g", i, r->step_s, step_s);
}

/* Two ranks' lines on one line: both records, exact (today's code kept the first). */
static void test_glued(void) {
  struct col c = {0};
  struct pit_parse_stats st =
      parse("[epoch: 1/2][iteration: 3/40][rank: 0] Loss_D: 0.1201, Loss_G: 5.2861, D(x): 0.9046, "
            "D(G(z)): 0.0116 / 0.0057, iteration time: 0.2s[epoch: 1/2][iteration: 3/40][rank: 1] Loss_D: "
            "0.1301, Loss_G: 5.1, D(x): 0.9, D(G(z)): 0.01 / 0.005, iteration time: 0.21s\n\n"
            "Rank: 0, Epoch: 0, iteration: 5/40, It. time: 0.75s, Elapsed time: 12.5 sRank: 1, Epoch: 0, "
            "iteration: 5/40, It. time: 0.5s, Elapsed time: 12.25 s\n"
            "[rank: 0] Epoch 1 took: 107.893 seconds[rank: 1] Epoch 1 took: 108.5 seconds\n",
            &c);
  EQ(c.n, 6);
  iter_is(&c, 0, 0, 1, 3, 43, 0.2);
  iter_is(&c, 1, 1, 1, 3, 43, 0.21);
  CHECK(c.n > 1 && c.r[1].nlosses == 2 && c.r[1].loss_val[0] == 0.1301, "rank 1's losses");
  iter_is(&c, 2, 0, 0, 5, 5, 0.75);
  iter_is(&c, 3, 1, 0, 5, 5, 0.5);
  CHECK(c.n > 3 && c.r[2].t == 12.5 && c.r[3].t == 12.25, "elapsed times");
  CHECK(c.n == 6 && c.r[4].type == PIT_REC_EPOCH && c.r[4].rank == 0 && c.r[4].epoch_s == 107.893 &&
            c.r[5].type == PIT_REC_EPOCH && c.r[5].rank == 1 && c.r[5].epoch_s == 108.5,
        "epoch twins of two ranks");
  EQ(st.glued, 3);
  EQ(st.cut, 0);
  EQ(st.lines, 4);
  EQ(st.known, 3);
  EQ(st.skipped, 1);
  /* explained as parts: line 1, part 0 and part 1 */
  CHECK(c.nx >= 2 && c.x[0].line == 1 && c.x[0].part == 0 && c.x[1].line == 1 && c.x[1].part == 1 &&
            c.x[1].use == PIT_USE_RECORD && strcmp(c.x[1].reader, "dcgan") == 0,
        "parts of line 1");

  /* a line cut by another glued into it: the whole one is read, the cut one counted and named */
  st = parse("[epoch: 1/2][iteration: 3/40][rank: 0] Loss_D: 0.12[epoch: 1/2][iteration: 3/40][rank: 1] "
             "Loss_D: 0.2, Loss_G: 1.5, iteration time: 0.21s\n"
             "ss_G: 5.2861, D(x): 0.9046, iteration t[epoch: 1/2][iteration: 4/40][rank: 1] Loss_D: 0.2, "
             "iteration time: 0.25s\n",
             &c);
  EQ(c.n, 2);
  iter_is(&c, 0, 1, 1, 3, 43, 0.21);
  iter_is(&c, 1, 1, 1, 4, 44, 0.25);
  EQ(st.cut, 2);
  EQ(st.glued, 2);
  EQ(st.known, 2);
  EQ(st.malformed, 0);
  CHECK(c.nw == 2 && strstr(c.warn[0], "log.txt:1: part of a line with another line glued into it") &&
            strstr(c.warn[1], "log.txt:2:"),
        "cut parts named: %s | %s", c.warn[0], c.warn[1]);
  CHECK(c.nx == 4 && c.x[0].use == PIT_USE_CUT && c.x[2].use == PIT_USE_CUT && c.x[3].use == PIT_USE_RECORD,
        "cut parts explained");
  col_free(&c);
}

/* A dialect written for this test, unknown to the named formats, in several styles. */
static const char dialect[] =
    "step=12/500 loss=0.3 step_time=45ms rank=1\n"                   /* key=value, ms */
    "| epoch 2 | iter 30/100 | time/it 0.12s |\n"                     /* | key value |, time/it */
    "| epoch 3 | step 120/500 | 45.1 ms/batch |\n"                    /* value unit */
    "epoch: 4, iteration: 7, iter time: 1.5 sec, rank: 2\n"           /* key: value, sec */
    "ep, 6, batch, 11, step time, 250 msec\n"                         /* key, value */
    "[worker 3] it 9/10 | 2.5 it/s\n"                                 /* a rate, the rank in a tag */
    "Epoch 2 took: 12.5 seconds\n"                                    /* an epoch's time */
    "epoch_time_ms=1500 epoch=5\n"                                    /* ms in the key */
    "step=13/500 step_time=44ms rank=1step=13/500 step_time=46ms rank=0\n"; /* glued */

static void test_dialect(void) {
  struct col c = {0};
  struct pit_parse_stats st = parse(dialect, &c);
  EQ(st.lines, 9);
  EQ(st.known, 9);
  EQ(st.generic, 10);
  EQ(st.glued, 1);
  EQ(c.n, 10);
  iter_is(&c, 0, 1, -1, 12, 12, 0.045);
  CHECK(c.n > 0 && c.r[0].loss == 0.3, "loss");
  iter_is(&c, 1, -1, 2, 30, 230, 0.12);
  iter_is(&c, 2, -1, 3, 120, 1620, 0.0451);
  iter_is(&c, 3, 2, 4, 7, 4 * 500 + 7, 1.5); /* 500 per epoch: the last i/L said so */
  iter_is(&c, 4, -1, 6, 11, 6 * 500 + 11, 0.25);
  iter_is(&c, 5, 3, -1, 9, 9, 0.4);
  CHECK(c.n > 7 && c.r[6].type == PIT_REC_EPOCH && c.r[6].epoch == 2 && c.r[6].epoch_s == 12.5, "Epoch 2 took");
  CHECK(c.n > 7 && c.r[7].type == PIT_REC_EPOCH && c.r[7].epoch == 5 && c.r[7].epoch_s == 1.5, "epoch_time_ms");
  iter_is(&c, 8, 1, -1, 13, 13, 0.044);
  iter_is(&c, 9, 0, -1, 13, 13, 0.046);
  for (int i = 0; i < c.nx; i++)
    CHECK(strcmp(c.x[i].reader, "kv") == 0, "line %ld read by %s", c.x[i].line, c.x[i].reader);
  /* no named format reads any of it */
  static const enum pit_parse_format named[] = {PIT_PARSE_JSONL, PIT_PARSE_SAGEMAKER, PIT_PARSE_CSV, PIT_PARSE_DCGAN,
                                                PIT_PARSE_PI};
  for (size_t k = 0; k < sizeof named / sizeof *named; k++) {
    st = parse_with(dialect, named[k], NULL, -1, &c);
    CHECK(c.n == 0 && st.known == 0, "format %s reads %d records of the dialect", pit_parse_format_name(named[k]), c.n);
  }
  /* tqdm: the updates of one line, '\r' between them */
  st = parse("Epoch 1:  10%|#         | 10/100 [00:01<00:09,  9.52it/s, loss=0.3]\r"
             "Epoch 1:  20%|##        | 20/100 [00:02<00:08,  8it/s, loss=0.2]\n",
             &c);
  EQ(c.n, 2);
  iter_is(&c, 0, -1, 1, 10, 110, 1 / 9.52);
  iter_is(&c, 1, -1, 1, 20, 120, 0.125);
  EQ(st.lines, 1);
  col_free(&c);
}

/* Lines the three client scripts print (no times): progress records. */
static void test_clients(void) {
  struct col c = {0};
  /* the PyTorch examples' DCGAN (print(opt), then per iteration) */
  struct pit_parse_stats st =
      parse("Namespace(dataroot=None, dataset='fake', workers=2, batchSize=64, imageSize=64, nz=100, ngf=64, "
            "ndf=64, niter=25, lr=0.0002, beta1=0.5, cuda=False, dry_run=False, ngpu=1, netG='', netD='', "
            "outf='.', manualSeed=None, classes='bedroom', mps=False)\n"
            "Random Seed:  4711\n"
            "[0/25][0/782] Loss_D: 1.6312 Loss_G: 5.4121 D(x): 0.5534 D(G(z)): 0.5757 / 0.0061\n"
            "[0/25][1/782] Loss_D: 1.1982 Loss_G: 6.0237 D(x): 0.6910 D(G(z)): 0.4385 / 0.0031\n"
            "[1/25][0/782] Loss_D: 0.3120 Loss_G: 4.1000 D(x): 0.8810 D(G(z)): 0.1385 / 0.0131\n",
            &c);
  EQ(c.n, 3);
  iter_is(&c, 0, -1, 0, 0, 0, NAN);
  iter_is(&c, 1, -1, 0, 1, 1, NAN);
  iter_is(&c, 2, -1, 1, 0, 782, NAN);
  EQ(st.progress, 3);
  CHECK(c.nx == 5 && c.x[0].use == PIT_USE_CONTEXT && strstr(c.x[0].info, "batch size 64"), "Namespace: %s",
        c.nx ? c.x[0].info : "");
  CHECK(c.nx == 5 && c.x[1].use == PIT_USE_SKIPPED, "Random Seed skipped");

  /* the MNIST example: "[n/N (p%)]" counts samples */
  static const char mnist[] = "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.329474\n"
                              "Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.425063\n"
                              "\n"
                              "Test set: Average loss: 0.0341, Accuracy: 9890/10000 (99%)\n"
                              "\n"
                              "Train Epoch: 2 [640/60000 (1%)]\tLoss: 0.301527\n";
  st = parse_with(mnist, PIT_PARSE_AUTO, NULL, 64, &c);
  EQ(c.n, 3);
  iter_is(&c, 0, -1, 1, 0, 938, NAN); /* with the batch size: 60000 samples = 938 iterations */
  iter_is(&c, 1, -1, 1, 10, 948, NAN);
  iter_is(&c, 2, -1, 2, 10, 2 * 938 + 10, NAN);
  CHECK(c.n > 1 && fabs(c.r[1].loss - 1.425063) < 1e-12, "loss");
  EQ(st.skipped, 3);
  st = parse(mnist, &c); /* without it: the counts stay samples */
  iter_is(&c, 1, -1, 1, 640, 60640, NAN);

  /* the job's length, line by line, as a live reader asks */
  struct pit_parser *p = NULL;
  struct pit_err e = {0};
  int64_t ne, ni;
  int smp;
  CHECK(pit_parser_new(&p, PIT_PARSE_AUTO, "r", 0, "live", emit, warn, &c, &e) == 0, "new");
  pit_parser_job_length(p, &ne, &ni, &smp);
  CHECK(ne == -1 && ni == -1 && smp == 0, "nothing known yet");
  static const char l1[] = "[0/25][0/782] Loss_D: 1.6312 Loss_G: 5.4121 D(x): 0.5534 D(G(z)): 0.5757 / 0.0061";
  CHECK(pit_parser_line(p, l1, sizeof l1 - 1, &e) == 0, "line");
  pit_parser_job_length(p, &ne, &ni, &smp);
  CHECK(ne == 25 && ni == 782 && smp == 0, "25 epochs of 782: %lld %lld", (long long)ne, (long long)ni);
  static const char l2[] = "Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.425063";
  CHECK(pit_parser_line(p, l2, sizeof l2 - 1, &e) == 0, "line");
  pit_parser_job_length(p, &ne, &ni, &smp);
  CHECK(ni == 60000 && smp == 1, "samples: %lld %d", (long long)ni, smp);
  pit_parser_free(p);

  /* the DDP tutorial (torchrun, tee'd: "[default0]:"), two ranks interleaved */
  st = parse("[default0]:[GPU0] Epoch 0 | Batchsize: 32 | Steps: 64\n"
             "[default1]:[GPU1] Epoch 0 | Batchsize: 32 | Steps: 64\n"
             "[default0]:Epoch 0 | Training snapshot saved at snapshot.pt\n"
             "[default1]:[GPU1] Epoch 1 | Batchsize: 32 | Steps: 64\n"
             "[default0]:[GPU0] Epoch 1 | Batchsize: 32 | Steps: 64\n"
             "Loading snapshot\n",
             &c);
  EQ(c.n, 3);
  CHECK(c.n > 0 && c.r[0].type == PIT_REC_CHECKPOINT && c.r[0].epoch == 0 && c.r[0].path &&
            strcmp(c.r[0].path, "snapshot.pt") == 0 && c.r[0].rank == 0,
        "snapshot line: a checkpoint");
  iter_is(&c, 1, 1, 0, 63, 63, NAN); /* epoch 1 begins: epoch 0's last iteration is done */
  iter_is(&c, 2, 0, 0, 63, 63, NAN);
  CHECK(c.nx == 6 && c.x[0].use == PIT_USE_CONTEXT && c.x[0].epoch_start && strstr(c.x[0].info, "epoch 0 begins"),
        "first epoch line: context, an epoch start (%s)", c.nx ? c.x[0].info : "");
  CHECK(c.nx == 6 && c.x[5].use == PIT_USE_SKIPPED && strcmp(c.x[5].why, "no number") == 0, "why: %s",
        c.nx == 6 ? c.x[5].why : "");
  col_free(&c);
}

/* Why lines are not used. */
static void test_reasons(void) {
  struct col c = {0};
  parse("Dataset size 50000 images\nSaving images\nwall time 3s\n[1/2] step 3\n[1/2] step 3\n", &c);
  CHECK(c.nx == 5, "parts %d", c.nx);
  if (c.nx == 5) {
    CHECK(strcmp(c.x[0].why, "no known key") == 0, "0: %s", c.x[0].why);
    CHECK(strcmp(c.x[1].why, "no number") == 0, "1: %s", c.x[1].why);
    CHECK(strstr(c.x[2].why, "a time with no iteration or epoch") != NULL, "2: %s", c.x[2].why);
    CHECK(c.x[3].use == PIT_USE_RECORD, "3 used");
    CHECK(strstr(c.x[4].why, "duplicate") != NULL, "4: %s", c.x[4].why);
  }
  /* binary bytes are not read as key/value text */
  parse("it 3 \x01\x02 time 0.5\n", &c);
  EQ(c.n, 0);
  col_free(&c);
}

static void test_pattern(void) {
  struct col c = {0};
  struct pit_parse_stats st =
      parse_with("12:00:01 worker#2 finished it 7/50 in 120ms (epoch 1)\n"
                 "12:00:02 worker#0 finished it 8/50 in 95.5ms (epoch 1)\n"
                 "[epoch: 1/2][iteration: 3/40][rank: 0] Loss_D: 0.1, iteration time: 0.5s\n"
                 "nothing here\n",
                 PIT_PARSE_AUTO, "worker#{rank} finished it {iter}/{iters} in {step_ms}ms (epoch {epoch})", -1, &c);
  EQ(st.pattern, 2);
  EQ(c.n, 3);
  iter_is(&c, 0, 2, 1, 7, 57, 0.12);
  iter_is(&c, 1, 0, 1, 8, 58, 0.0955);
  iter_is(&c, 2, 0, 1, 3, 43, 0.5); /* other lines: the readers as always */
  CHECK(c.nx == 4 && strcmp(c.x[0].reader, "pattern") == 0 && strcmp(c.x[2].reader, "dcgan") == 0, "readers");
  /* {*} and flexible blanks */
  st = parse_with("E3 :: done   step 11 ~~ 0.25 s\n", PIT_PARSE_AUTO, "E{epoch} {*} step {step} ~~ {step_s} s", -1, &c);
  EQ(c.n, 1);
  iter_is(&c, 0, -1, 3, 11, 11, 0.25);
  /* bad templates */
  struct pit_parser *p = NULL;
  struct pit_err e = {0};
  CHECK(pit_parser_new(&p, PIT_PARSE_AUTO, "r", 0, "f", NULL, NULL, NULL, &e) == 0, "new");
  CHECK(pit_parser_set_pattern(p, "it {iter", &e) == PIT_EARG && strstr(e.msg, "not closed"), "%s", e.msg);
  CHECK(pit_parser_set_pattern(p, "it {iteration}", &e) == PIT_EARG && strstr(e.msg, "unknown field {iteration}"),
        "%s", e.msg);
  CHECK(pit_parser_set_pattern(p, "{iter}{step_s}", &e) == PIT_EARG && strstr(e.msg, "nothing between"), "%s", e.msg);
  CHECK(pit_parser_set_pattern(p, "no fields", &e) == PIT_EARG, "%s", e.msg);
  pit_parser_free(p);
  col_free(&c);
}

/* Frameworks' own shapes (docs/parse.md, "Any dialect"): what each line says, exact. */
static void test_frameworks(void) {
  struct col c = {0};
  /* Megatron-LM: a unit in parentheses after the key, the global batch, a padded total */
  struct pit_parse_stats st =
      parse(" iteration      100/  500000 | consumed samples:        51200 | elapsed time per iteration (ms): 250.0 | "
            "learning rate: 1.000E-04 | global batch size:   512 | lm loss: 5.000000E+00 | loss scale: 65536.0 |\n",
            &c);
  EQ(c.n, 1);
  iter_is(&c, 0, -1, -1, 100, 100, 0.25);
  CHECK(c.n == 1 && c.r[0].batch == 512 && c.r[0].loss == 5, "Megatron batch %lld loss %g", c.n ? (long long)c.r[0].batch : -1LL,
        c.n ? c.r[0].loss : 0);
  EQ(st.progress, 0);
  /* Keras: "Epoch e/N" begins epoch e (printed from 1), the bar after it is that epoch's; its
   * partial updates ('\b's then '\r') and the summary's "5s" (the epoch's time) */
  static const char keras[] =
      "Epoch 1/10\n 100/1875 [>.............................] - ETA: 1:23 - loss: 0.5000\b\b\b\b\r"
      "1875/1875 [==============================] - 5s 2ms/step - loss: 0.2950 - accuracy: 0.9151\nEpoch 2/10\n"
      "1875/1875 [==============================] - 4s 2ms/step - loss: 0.1420 - accuracy: 0.9577\n";
  st = parse(keras, &c);
  EQ(c.n, 5);
  iter_is(&c, 0, -1, 0, 100, 100, NAN);
  iter_is(&c, 1, -1, 0, 1875, 1875, 0.002);
  CHECK(c.n == 5 && c.r[2].type == PIT_REC_EPOCH && c.r[2].epoch == 0 && c.r[2].epoch_s == 5, "epoch 0's time");
  iter_is(&c, 3, -1, 1, 1875, 3750, 0.002);
  CHECK(c.n == 5 && c.r[4].type == PIT_REC_EPOCH && c.r[4].epoch == 1 && c.r[4].epoch_s == 4, "epoch 1's time");
  CHECK(c.nx >= 1 && c.x[0].use == PIT_USE_CONTEXT && c.x[0].epoch_start && strstr(c.x[0].info, "epoch 0 begins"),
        "Epoch 1/10: %s", c.nx ? c.x[0].info : "");
  EQ(st.skipped, 0);
  /* DeepSpeed: two lines of one step are one record; the timestamps time the steps between */
  static const char ds[] =
      "[2024-05-01 10:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[0.0001]\n"
      "[2024-05-01 10:00:00,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=10/global_step=10, "
      "RunningAvgSamplesPerSec=128.5, CurrSamplesPerSec=130.1, MemAllocated=1.2GB\n"
      "[2024-05-01 10:00:02,500] [INFO] [timer.py:260:stop] epoch=0/micro_step=20/global_step=20, "
      "RunningAvgSamplesPerSec=128.9, CurrSamplesPerSec=128.0, MemAllocated=1.2GB\n";
  st = parse(ds, &c);
  EQ(c.n, 2);
  iter_is(&c, 0, 0, 0, 10, 10, NAN);
  iter_is(&c, 1, -1, 0, 20, 20, 0.25);
  CHECK(c.n == 2 && c.r[0].t == 0 && c.r[1].t == 2.5, "clock");
  EQ(st.merged, 1);
  /* with the global batch (DeepSpeed's config dump): samples/s give the step's own time */
  char buf[1024];
  snprintf(buf, sizeof buf, "[2024-05-01 09:59:58,000] [INFO] [config.py:988:print]   train_batch_size ..... 32\n%s", ds);
  parse(buf, &c);
  EQ(c.n, 2);
  iter_is(&c, 1, -1, 0, 20, 20, 32 / 128.0);
  CHECK(c.n == 2 && c.r[1].batch == 32, "global batch");
  /* mmcv's "Epoch [e][i/L]" counts epochs from 1 */
  parse("2024-05-01 10:00:00,000 - mmdet - INFO - Epoch [2][50/7330]\tlr: 1.988e-03, time: 0.5, data_time: 0.05, loss: 1.5\n",
        &c);
  iter_is(&c, 0, -1, 1, 50, 7380, 0.5);
  /* mmengine's "Epoch(train) [e][i/L]" counts from 1 too, after a '/' date; "Epoch(val)" lines are
   * validation iterations: no record, and their 500 is not the epoch's length */
  st = parse("2024/05/01 10:00:00 - mmengine - INFO - Epoch(val)  [1][ 50/500]    eta: 0:00:16  time: 0.1000\n"
             "2024/05/02 10:00:00 - mmengine - INFO - Epoch(train)  [2][  50/7330]  lr: 1.9880e-03  time: 0.5000  "
             "data_time: 0.0510  loss: 1.5000\n",
             &c);
  EQ(c.n, 1);
  iter_is(&c, 0, -1, 1, 50, 7380, 0.5);
  EQ(st.skipped, 0);
  EQ(st.unrecognised, 0);
  /* "(val)" after a metric's key is only the metric's: the line is still a training iteration */
  parse("epoch 3 | step 10/100 | loss(val): 0.6 | time 12s\n", &c);
  EQ(c.n, 1);
  iter_is(&c, 0, -1, 3, 10, 310, 12);
  /* torchtune's "E|S|Loss: X" tqdm description: epoch (from 1) and global step */
  parse("2|1020|Loss: 1.7654321:   2%|\xe2\x96\x8f         | 20/1000 [00:10<08:10,  2.00it/s]\n", &c);
  EQ(c.n, 1);
  iter_is(&c, 0, -1, 1, 20, 1020, 0.5);
  CHECK(c.n == 1 && c.r[0].loss == 1.7654321, "torchtune loss");
  /* HF Trainer's final summary dict: an end record with the training's time */
  st = parse("{'train_runtime': 123.4567, 'train_samples_per_second': 25.9, 'train_steps_per_second': 3.24, "
             "'train_loss': 1.2345, 'epoch': 3.0}\n",
             &c);
  EQ(c.n, 1);
  CHECK(c.n == 1 && c.r[0].type == PIT_REC_END && c.r[0].total_s == 123.4567, "HF train_runtime");
  EQ(st.unrecognised, 0);
  /* Composer's "time/batch: 15" is a count, not 15 seconds */
  parse("[epoch=1][batch=16/469]:\n\t Train time/epoch: 0\n\t Train time/batch: 15\n", &c);
  EQ(c.n, 1);
  iter_is(&c, 0, -1, 1, 16, 485, NAN);
  /* fairseq: "i / L", num_updates, ups, wall */
  parse("2024-05-01 10:00:31 | INFO | train_inner | epoch 001:    100 / 1000 loss=9.5, ppl=724.08, wps=12345.6, "
        "ups=3.2, wpb=3857.5, bsz=128, num_updates=100, lr=0.0005, train_wall=31, wall=31\n",
        &c);
  iter_is(&c, 0, -1, 1, 100, 100, 1 / 3.2);
  CHECK(c.n == 1 && c.r[0].t == 31, "wall");
  col_free(&c);
}

int main(void) {
  test_frameworks();
  test_glued();
  test_dialect();
  test_clients();
  test_reasons();
  test_pattern();
  return check_done();
}

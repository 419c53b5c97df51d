/* test_parse_lines.c — every line kind `pitstop parse` knows, fed through the
 * parser, with the exact values of the records they become; merging of twin
 * lines, step numbering, context lines, malformed and unknown lines. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/parse.h"

#define MAXREC 64

struct col {
  struct pit_record r[MAXREC];
  int n;
  char warn[8][512];
  int nw;
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

static void col_free(struct col *c) {
  for (int i = 0; i < c->n; i++)
    pit_record_release(&c->r[i]);
  memset(c, 0, sizeof *c);
}

/* Parses text (lines split at '\n') as file "log.txt", run "r". */
static struct pit_parse_stats parse(const char *text, enum pit_parse_format f, struct col *c) {
  col_free(c);
  struct pit_parser *p = NULL;
  struct pit_err e = {0};
  struct pit_parse_stats st = {0};
  if (pit_parser_new(&p, f, "r", 0, "log.txt", emit, warn, c, &e)) {
    CHECK(0, "pit_parser_new: %s", e.msg);
    return st;
  }
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

#define EQ(a, b) CHECK((a) == (b), "%s = %.17g, want %.17g", #a, (double)(a), (double)(b))
#define ABSENT(a) CHECK(isnan(a), "%s = %.17g, want absent", #a, (double)(a))

static void test_dcgan(void) {
  struct col c = {0};
  struct pit_parse_stats st;

  st = parse("[epoch: 1/2][iteration: 3/20][rank: 2] Loss_D: 0.1201, Loss_G: 5.2861, D(x): 0.9046, "
             "D(G(z)): 0.0116 / 0.0057, iteration time: 5.3514s\n",
             PIT_PARSE_AUTO, &c);
  EQ(c.n, 1);
  EQ(st.known, 1);
  struct pit_record *r = &c.r[0];
  EQ(r->type, PIT_REC_ITER);
  CHECK(strcmp(r->run, "r") == 0, "run %s", r->run);
  EQ(r->rank, 2);
  EQ(r->epoch, 1);
  EQ(r->iter, 3);
  EQ(r->step, 23); /* 1*20+3 */
  EQ(r->step_s, 5.3514);
  EQ(r->nlosses, 2);
  CHECK(strcmp(r->loss_name[0], "d") == 0 && strcmp(r->loss_name[1], "g") == 0, "loss names");
  EQ(r->loss_val[0], 0.1201);
  EQ(r->loss_val[1], 5.2861);
  ABSENT(r->t);
  EQ(r->batch, -1);

  parse("Rank: 1, Epoch: 0, iteration: 5/40, It. time: 0.75s, Elapsed time: 12.5 s\n", PIT_PARSE_AUTO, &c);
  EQ(c.n, 1);
  r = &c.r[0];
  EQ(r->type, PIT_REC_ITER);
  EQ(r->rank, 1);
  EQ(r->epoch, 0);
  EQ(r->iter, 5);
  EQ(r->step, 5);
  EQ(r->step_s, 0.75);
  EQ(r->t, 12.5);

  parse("Rank,0,Epoch,2,Iteration,1,It. time,2.577510118484497,Elapsed time,2.8365161418914795\n",
        PIT_PARSE_AUTO, &c);
  EQ(c.n, 1);
  r = &c.r[0];
  EQ(r->rank, 0);
  EQ(r->epoch, 2);
  EQ(r->iter, 1);
  EQ(r->step, 0); /* iterations per epoch unknown: the rank's running count */
  EQ(r->step_s, 2.577510118484497);
  EQ(r->t, 2.8365161418914795);

  parse("[MO833] Rank,3,Epoch,1,Iteration,7,It. time,1.5,Elapsed time,100.25\n"
        "  [1,3]<stdout>: [MO833] Rank,3,Epoch,1,Iteration,8,It. time,1.25,Elapsed time,101.5\n",
        PIT_PARSE_AUTO, &c);
  EQ(c.n, 2);
  EQ(c.r[0].rank, 3);
  EQ(c.r[0].iter, 7);
  EQ(c.r[0].step_s, 1.5);
  EQ(c.r[0].t, 100.25);
  EQ(c.r[1].iter, 8);
  EQ(c.r[1].step, 1);
  EQ(c.r[1].step_s, 1.25);

  parse("Rank,0,Initialization Time: 18.00586771965027\nRank: 1, Initialize time: 3.5 s\n", PIT_PARSE_AUTO, &c);
  EQ(c.n, 2);
  EQ(c.r[0].type, PIT_REC_INIT);
  EQ(c.r[0].rank, 0);
  EQ(c.r[0].init_s, 18.00586771965027);
  EQ(c.r[1].type, PIT_REC_INIT);
  EQ(c.r[1].rank, 1);
  EQ(c.r[1].init_s, 3.5);

  parse("[rank: 0] Epoch 4 took: 107.8930 seconds\n"
        "Rank,1,Epoch,0,Epoch time,1068.8317251205444,Elapsed time,1068.8317656517029\n",
        PIT_PARSE_AUTO, &c);
  EQ(c.n, 2);
  EQ(c.r[0].type, PIT_REC_EPOCH);
  EQ(c.r[0].rank, 0);
  EQ(c.r[0].epoch, 4);
  EQ(c.r[0].epoch_s, 107.8930);
  EQ(c.r[1].type, PIT_REC_EPOCH);
  EQ(c.r[1].rank, 1);
  EQ(c.r[1].epoch_s, 1068.8317251205444);
  EQ(c.r[1].t, 1068.8317656517029);

  /* context: per-rank batch x world size = global batch; init gets the rank count */
  st = parse("Namespace(batch_size=32, beta1=0.5, cuda=False)\nRank: 0. World Size: 2\n"
             "Rank: 0, Epoch: 0, Training ...\nRank,0,Initialization Time: 1.5\n"
             "[epoch: 0/1][iteration: 0/782][rank: 0] Loss_D: 1.4536, Loss_G: 4.1686, iteration time: 2.5775s\n",
             PIT_PARSE_AUTO, &c);
  EQ(st.known, 5);
  EQ(st.records, 2);
  EQ(c.r[0].ranks, 2);
  EQ(c.r[1].batch, 64);

  /* twins: the bracket line and its precise CSV / "Iteration time" twin make one record */
  st = parse("[epoch: 0/1][iteration: 0/782][rank: 0] Loss_D: 1.4536, Loss_G: 4.1686, iteration time: 2.5775s\n"
             "Rank,0,Epoch,0,Iteration,0,It. time,2.577510118484497,Elapsed time,2.8365161418914795\n"
             "[epoch: 0/1][iteration: 1/782][rank: 0] Loss_D: 0.9402, Loss_G: 3.3680, iteration time: 1.3920s\n"
             "Iteration time: 1.3920483589172363\n"
             "[rank: 0] Epoch 0 took: 1068.8312 seconds\n"
             "Rank,0,Epoch,0,Epoch time,1068.8312153816223,Elapsed time,1068.8312640190125\n",
             PIT_PARSE_AUTO, &c);
  EQ(c.n, 3);
  EQ(st.merged, 3);
  EQ(st.known, 6);
  EQ(c.r[0].step_s, 2.577510118484497);
  EQ(c.r[0].t, 2.8365161418914795);
  EQ(c.r[0].loss_val[0], 1.4536);
  EQ(c.r[1].step, 1);
  EQ(c.r[1].step_s, 1.3920483589172363);
  EQ(c.r[2].type, PIT_REC_EPOCH);
  EQ(c.r[2].epoch_s, 1068.8312153816223);
  EQ(c.r[2].t, 1068.8312640190125);

  /* the same kind twice is two records (no merging), other rank is not a twin */
  parse("Rank,0,Epoch,0,Iteration,0,It. time,1,Elapsed time,1\nRank,0,Epoch,0,Iteration,0,It. time,2,Elapsed time,2\n"
        "Rank,1,Epoch,0,Iteration,0,It. time,3,Elapsed time,3\n",
        PIT_PARSE_AUTO, &c);
  EQ(c.n, 3);
  EQ(c.r[1].step, 1);
  EQ(c.r[2].step, 0);
  /* a lone "Iteration time" is an iteration of all ranks */
  parse("Iteration time: 0.5\n", PIT_PARSE_AUTO, &c);
  EQ(c.n, 1);
  EQ(c.r[0].rank, -1);
  EQ(c.r[0].step_s, 0.5);
  col_free(&c);
}

static void test_sagemaker(void) {
  struct col c = {0};
  struct pit_parse_stats st = parse(
      "('Tempo de inicializacao: ', 0.2424459457397461)\n"
      "Real time: 1000.25\n"
      "37 step training time: 0.251832962036s\n"
      "Real time: 1002.75s\n"
      "40 steps training: 2.58118700981s\n"
      "Validation time: 0.166088104248\n"
      "Epoch time: 20.8873980045s\n"
      "(0, 'step training time:', 0.125)\n"
      "('Validation time: ', 0.5)\n"
      "Tempo de inicializacao: 0.75\n"
      "Duracao do treinamento:    123.5\n",
      PIT_PARSE_AUTO, &c);
  EQ(st.lines, 11);
  EQ(st.known, 11);
  EQ(c.n, 9);
  EQ(c.r[0].type, PIT_REC_INIT);
  EQ(c.r[0].init_s, 0.2424459457397461);
  ABSENT(c.r[0].t);
  EQ(c.r[1].type, PIT_REC_ITER);
  EQ(c.r[1].epoch, 0);
  EQ(c.r[1].iter, 37);
  EQ(c.r[1].step, 0);
  EQ(c.r[1].step_s, 0.251832962036);
  EQ(c.r[1].t, 0.0);
  EQ(c.r[2].iter, 40);
  EQ(c.r[2].step, 1);
  EQ(c.r[2].step_s, 2.58118700981);
  EQ(c.r[2].t, 2.5);
  EQ(c.r[3].type, PIT_REC_VALIDATION);
  EQ(c.r[3].epoch, 0);
  EQ(c.r[3].val_s, 0.166088104248);
  EQ(c.r[4].type, PIT_REC_EPOCH);
  EQ(c.r[4].epoch, 0);
  EQ(c.r[4].epoch_s, 20.8873980045);
  EQ(c.r[5].type, PIT_REC_ITER);
  EQ(c.r[5].epoch, 1);
  EQ(c.r[5].iter, 0);
  EQ(c.r[5].step, 2);
  EQ(c.r[5].step_s, 0.125);
  EQ(c.r[6].type, PIT_REC_VALIDATION);
  EQ(c.r[6].epoch, 1);
  EQ(c.r[6].val_s, 0.5);
  EQ(c.r[7].init_s, 0.75);
  EQ(c.r[8].type, PIT_REC_END);
  EQ(c.r[8].total_s, 123.5);
  for (int i = 0; i < c.n; i++)
    EQ(c.r[i].rank, -1);
  col_free(&c);
}

static void test_csv(void) {
  struct col c = {0};
  struct pit_parse_stats st =
      parse("total,t0,t1\n4113.827690893995,4105.5424,4105.6929\n,4000.5,4001.25,\n", PIT_PARSE_AUTO, &c);
  EQ(st.known, 3);
  EQ(st.records, 5);
  EQ(c.n, 5);
  CHECK(strcmp(c.r[0].run, "r.1") == 0, "run %s", c.r[0].run);
  EQ(c.r[0].type, PIT_REC_EPOCH);
  EQ(c.r[0].rank, 0);
  EQ(c.r[0].epoch, 0);
  EQ(c.r[0].epoch_s, 4105.5424);
  EQ(c.r[1].rank, 1);
  EQ(c.r[1].epoch_s, 4105.6929);
  EQ(c.r[2].type, PIT_REC_END);
  EQ(c.r[2].total_s, 4113.827690893995);
  CHECK(strcmp(c.r[3].run, "r.2") == 0, "run %s", c.r[3].run);
  EQ(c.r[3].epoch_s, 4000.5);
  EQ(c.r[4].epoch_s, 4001.25);
  /* wrong column count, non-number: malformed; rows before any header: unknown */
  st = parse("1.5,2.5\ntotal,t0\n1,2,3\n1,x\n", PIT_PARSE_AUTO, &c);
  EQ(st.skipped, 1);
  EQ(st.malformed, 2);
  EQ(c.n, 0);
  col_free(&c);
}

static void test_pi(void) {
  struct col c = {0};
  struct pit_parse_stats st = parse("[PI-INFO] Init time,1,2.500000\n"
                                    "[PI-INFO] Paramount Iteration,1,4,12.250000,0.750000\n"
                                    "[RU-INFO] Resources Stats,1,4,1.0,2.0,3\n"
                                    "[PI-INFO] Paramount Iteration: Rank=0\tCurrent Iteration=5\tTime of "
                                    "iteration=0.625000\tAccumulated time=3.000000\n"
                                    "[PI-INFO] PI avg,1,0.700000,10\n"
                                    "[PI-INFO] Beta,1,0.050000\n"
                                    "[PI-INFO] Total time,40.125000\n",
                                    PIT_PARSE_AUTO, &c);
  EQ(st.known, 6);
  EQ(st.skipped, 1);
  EQ(c.n, 4);
  EQ(c.r[0].type, PIT_REC_INIT);
  EQ(c.r[0].rank, 1);
  EQ(c.r[0].init_s, 2.5);
  EQ(c.r[1].type, PIT_REC_ITER);
  EQ(c.r[1].rank, 1);
  EQ(c.r[1].iter, 4);
  EQ(c.r[1].step, 4);
  EQ(c.r[1].t, 12.25);
  EQ(c.r[1].step_s, 0.75);
  EQ(c.r[2].rank, 0);
  EQ(c.r[2].step, 5);
  EQ(c.r[2].step_s, 0.625);
  ABSENT(c.r[2].t);
  EQ(c.r[3].type, PIT_REC_END);
  EQ(c.r[3].total_s, 40.125);
  col_free(&c);
}

static void test_json(void) {
  struct col c = {0};
  struct pit_parse_stats st =
      parse("{\"type\":\"iter\",\"run\":\"own\",\"gen\":1,\"t\":3.2,\"epoch\":0,\"iter\":17,\"step\":17,"
            "\"batch\":64,\"step_s\":0.0051,\"compute_s\":[0.0046,0.0031],\"wait_s\":[0.0002,0.0017],\"loss\":1.93}\n"
            "2024-05-01 12:00:00 PITSTOP {\"type\":\"epoch\",\"gen\":0,\"t\":9,\"epoch\":0,\"epoch_s\":8.5}\n"
            "[1,0]<stdout>:PITSTOP {\"type\":\"end\",\"gen\":0,\"t\":10,\"total_s\":10.5}\n"
            "{\"some\":\"other json\"}\n"
            "{\"type\":\"iter\",\"run\":\"own\",\"gen\":0,\"t\":3.\n"
            "PITSTOP {\"type\":\"bogus\"}\n",
            PIT_PARSE_AUTO, &c);
  EQ(c.n, 3);
  EQ(st.skipped, 1);
  EQ(st.malformed, 2);
  CHECK(strcmp(c.r[0].run, "own") == 0, "own run kept: %s", c.r[0].run);
  EQ(c.r[0].gen, 1);
  EQ(c.r[0].nranks, 2);
  EQ(c.r[0].wait_s[1], 0.0017);
  CHECK(strcmp(c.r[1].run, "r") == 0, "file run given: %s", c.r[1].run);
  EQ(c.r[1].type, PIT_REC_EPOCH);
  EQ(c.r[1].epoch_s, 8.5);
  EQ(c.r[2].type, PIT_REC_END);
  EQ(c.r[2].total_s, 10.5);
  CHECK(c.nw == 2 && strncmp(c.warn[0], "log.txt:5: ", 11) == 0, "warn: %s", c.warn[0]);
  col_free(&c);
}

static void test_bad_and_forced(void) {
  struct col c = {0};
  struct pit_parse_stats st =
      parse("hello world\n\n   \nRank,0,Epoch,0,Iteration,1,It. time,abc,Elapsed time,1\r\n"
            "[epoch: 0/1][iteration: 2/782][ra\n"
            "Rank: 0, Epoch: 0, iteration: 1/2, It. time: -1s\n"
            "37 step training time: nan\n"
            "[PI-INFO] Init time,x,1\n"
            "Rank,2000000,Initialization Time: 1\n",
            PIT_PARSE_AUTO, &c);
  EQ(st.lines, 9);
  EQ(st.skipped, 3);
  EQ(st.malformed, 6);
  EQ(c.n, 0);
  CHECK(c.nw >= 1 && strcmp(c.warn[0], "log.txt:4: bad It. time: 'abc,Elapsed time,1'") == 0, "reason: %s",
        c.warn[0]);
  CHECK(c.nw >= 2 && strstr(c.warn[1], "log.txt:5: ") && strstr(c.warn[1], "rank"), "reason: %s", c.warn[1]);
  /* a forced format skips the other families */
  st = parse("Validation time: 0.5\n[rank: 0] Epoch 0 took: 1 seconds\n", PIT_PARSE_DCGAN, &c);
  EQ(st.skipped, 1);
  EQ(c.n, 1);
  EQ(c.r[0].type, PIT_REC_EPOCH);
  st = parse("Validation time: 0.5\n[rank: 0] Epoch 0 took: 1 seconds\n", PIT_PARSE_SAGEMAKER, &c);
  EQ(c.n, 1);
  EQ(c.r[0].type, PIT_REC_VALIDATION);
  enum pit_parse_format f;
  CHECK(pit_parse_format_from_name("pi", &f) == 0 && f == PIT_PARSE_PI, "format name");
  CHECK(pit_parse_format_from_name("regex", &f) == PIT_EARG, "bad format name");
  char run[PIT_NAME_MAX];
  pit_parse_run_name("/a/b/cluster-1_output-0.txt", run, sizeof run);
  CHECK(strcmp(run, "cluster-1_output-0") == 0, "run name %s", run);
  pit_parse_run_name("-", run, sizeof run);
  CHECK(strcmp(run, "stdin") == 0, "run name %s", run);
  col_free(&c);
}

/* Lines of course runs that were not used to build the parser (issue 12.6):
 * the "Rank: r, Epoch: e, Epoch time" line, "[Rank: r] Epoch e took" with its
 * other capitalisation, trailing blanks; the job context on the init record
 * (the N of "[epoch: e/N]" as its epochs). */
static void test_dcgan_more(void) {
  struct col c = {0};
  struct pit_parse_stats st =
      parse("Namespace(batch_size=64, beta1=0.5, cuda=False) \nRank: 0. World Size: 4 \n"
            "Rank: 0, Initialize time: 37.3628 s \nRank: 0, Epoch: 0, Training ... \n"
            "[epoch: 0/1][iteration: 0/196][rank: 0] Loss_D: 1.4992, Loss_G: 3.8765, iteration time: 4.3873s \n"
            "Rank: 0, Epoch: 0, iteration: 0/196, It. time: 4.3873s, Elapsed time: 41.8119 s \n"
            "[Rank: 0] Epoch 0 took: 794.9079 seconds \n"
            "Rank: 0, Epoch: 0, Epoch time: 794.9079s, Elapsed time: 832.2790 s",
            PIT_PARSE_AUTO, &c);
  EQ(st.malformed, 0);
  EQ(st.skipped, 0);
  EQ(st.unrecognised, 0);
  EQ(c.n, 3);
  EQ(c.r[0].type, PIT_REC_INIT);
  CHECK(c.r[0].config && strcmp(c.r[0].config, "{\"batch\":256,\"batch_per_rank\":64,\"ranks\":4,"
                                                "\"iters_per_epoch\":196,\"epochs\":1}") == 0,
        "init config %s", c.r[0].config ? c.r[0].config : "(none)");
  EQ(c.r[1].batch, 256);
  EQ(c.r[2].type, PIT_REC_EPOCH);
  EQ(c.r[2].epoch_s, 794.9079);
  EQ(c.r[2].t, 832.2790);
  EQ(st.merged, 2);
  /* alone, the epoch-time line is an epoch record; lower-case "epoch" in the took line */
  parse("Rank: 2, Epoch: 3, Epoch time: 12.5s, Elapsed time: 50 s\n[rank: 1] epoch 4 took: 7 seconds\n",
        PIT_PARSE_AUTO, &c);
  EQ(c.n, 2);
  EQ(c.r[0].rank, 2);
  EQ(c.r[0].epoch, 3);
  EQ(c.r[0].epoch_s, 12.5);
  EQ(c.r[1].epoch, 4);
  EQ(c.r[1].epoch_s, 7);
  /* malformed: the line is claimed, its value is not a time */
  st = parse("Rank: 0, Epoch: 0, Epoch time: soon\n", PIT_PARSE_AUTO, &c);
  EQ(st.malformed, 1);
  /* an init record of a log without any context carries no config */
  parse("Rank: 1, Initialize time: 3.5 s\n", PIT_PARSE_AUTO, &c);
  CHECK(c.n == 1 && c.r[0].config == NULL, "no config without context");
  col_free(&c);
}

/* A skipped line with a number next to "time" or "took" is an unrecognised
 * timing line: counted, the first three named file:line. */
static void test_unrecognised(void) {
  struct col c = {0};
  /* (until the key/value reader, lines 2, 4 and 5 were "Epoch 3 Time: 12.5", "step took
   * 0.5 s" and "it took: .25": that reader reads them now, below) */
  struct pit_parse_stats st = parse("Using seed: 0\ntotal time 12.5\nwall time=3s\nthat took 0.5 s\n"
                                    "all took: .25\nTIME: 9\nepoch time was long\ntimeout 30\n"
                                    "Rank: 0, Epoch: 0, Training ...\n",
                                    PIT_PARSE_AUTO, &c);
  EQ(st.unrecognised, 5);
  EQ(st.skipped, 8);
  EQ(st.known, 1);
  EQ(c.nw, 3);
  CHECK(strstr(c.warn[0], "log.txt:2: looks like a timing line") != NULL, "warn 0: %s", c.warn[0]);
  CHECK(strstr(c.warn[1], "log.txt:3:") != NULL, "warn 1: %s", c.warn[1]);
  CHECK(strstr(c.warn[2], "log.txt:4:") != NULL, "warn 2: %s", c.warn[2]);
  /* a time whose line says whose it is: read by the key/value reader */
  st = parse("Epoch 3 Time: 12.5\nstep took 0.5 s\nit took: .25\n", PIT_PARSE_AUTO, &c);
  EQ(st.unrecognised, 0);
  EQ(st.generic, 3);
  EQ(c.n, 3);
  CHECK(c.n == 3 && c.r[0].type == PIT_REC_EPOCH && c.r[0].epoch == 3 && c.r[0].epoch_s == 12.5, "epoch time");
  CHECK(c.n == 3 && c.r[1].type == PIT_REC_ITER && c.r[1].step_s == 0.5 && c.r[2].step_s == 0.25, "step times");
  col_free(&c);
}

/* The instance type a path names, among a catalog's types; the run of a
 * directory of per-rank files. */
static void test_paths(void) {
  static const char *const types[] = {"m4.xlarge", "t2.small", "p2.xlarge", "p2.8xlarge", "p2.16xlarge",
                                      "p3.2xlarge", "p3.8xlarge"};
  int n = (int)(sizeof types / sizeof *types);
  char t[PIT_NAME_MAX];
  static const char *const cases[][2] = {
      {"results/m4.xlarge/ip-172-31-50-167-rank0.out", "m4.xlarge"},
      {"x/cluster-t2.small-2x/GAN-758ad.out", "t2.small"},
      {"results/t2_small_4x/ip-172-31-65-71-rank0.out", "t2.small"},
      {"logs/result-p2-8-256-e0.txt", "p2.8xlarge"},
      {"logs/result-p2-1-256-e0.txt", "p2.xlarge"},
      {"logs/result-p2-16-2048-e0.txt", "p2.16xlarge"},
      {"logs/result-p3-2-512-e0.txt", "p3.2xlarge"},
      {"logs/result-p3-4-512-e0.txt", ""}, /* p3.4xlarge is no type of the list: not guessed */
      {"m4.xlarge/p2-8/run.log", "p2.8xlarge"}, /* the deepest component wins */
      {"rank0.out", ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int got = pit_parse_itype_from_path(cases[i][0], types, n, t, sizeof t);
    CHECK(strcmp(t, cases[i][1]) == 0 && got == (cases[i][1][0] != 0), "%s -> '%s', want '%s'", cases[i][0], t,
          cases[i][1]);
  }
  pit_parse_dir_run_name("a/b/m5.large/ip-1-rank0.out", t, sizeof t);
  CHECK(strcmp(t, "m5.large") == 0, "dir run %s", t);
  pit_parse_dir_run_name("rank0.out", t, sizeof t);
  CHECK(strcmp(t, "rank0") == 0, "dir run %s", t);
  /* a bad type name is refused */
  struct pit_parser *p = NULL;
  struct pit_err e = {0};
  CHECK(pit_parser_new(&p, PIT_PARSE_AUTO, "r", 0, "f", NULL, NULL, NULL, &e) == 0, "new");
  CHECK(pit_parser_set_itype(p, "a\"b", &e) == PIT_EARG, "quote in itype refused");
  CHECK(pit_parser_set_itype(p, "m4.xlarge", &e) == 0, "itype");
  pit_parser_free(p);
}

int main(void) {
  test_dcgan();
  test_dcgan_more();
  test_unrecognised();
  test_paths();
  test_sagemaker();
  test_csv();
  test_pi();
  test_json();
  test_bad_and_forced();
  return check_done();
}

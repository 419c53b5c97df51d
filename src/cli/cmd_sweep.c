/* cmd_sweep.c — `pitstop sweep`: runs a grid of trainings (ranks × global
 * batch × repeats) through mpirun, every run stored under the id
 * "<sweep>-r<R>-b<B>-<repeat>"; or exports a sweep's stored runs
 * (--export seed002-csv). Grid and export logic: src/sweep/. A failed cell is
 * reported and the sweep goes on; the exit status is 1 if any cell failed. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/store.h"
#include "pitstop/sweep.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: pitstop sweep --ranks R[,R...] --batch-size B[,B...] --model M --data D\n"
          "                     (--epochs N | --max-iters N) [--repeat K] [train options...]\n"
          "                     [--hostfile FILE] [--db PATH] [--id ID] [--dry-run] [--skip-done]\n"
          "                     [--mpirun PATH] [--mpirun-arg ARG]... [--train-cmd PATH] [--train-arg ARG]...\n"
          "       pitstop sweep --export seed002-csv --out FILE|DIR [--db PATH] [--id ID]\n"
          "\n"
          "Runs `mpirun -np R pitstop train ... --db PATH --run ID-rR-bB-K` for every rank count R,\n"
          "global batch B and repeat K (every configuration once, then again), storing every run.\n"
          "A failed run is reported and the sweep goes on; exit status 1 if any failed.\n"
          "\n"
          "  --ranks, --batch-size  comma-separated values (the batch is global, across ranks)\n"
          "  --repeat K         runs per configuration (default 1)\n"
          "  train options      any option of `pitstop train --help` but --batch-size, --db, --run and --out\n"
          "                     (--model, --data, --epochs/--max-iters, --threads, --itype, ...) is passed on\n"
          "  --id ID            sweep id, prefix of every run id (default sweep-YYYYMMDD-HHMMSS, UTC)\n"
          "  --db PATH          the store (default ./%s)\n"
          "  --dry-run          print the commands, run nothing\n"
          "  --skip-done        skip runs the store already holds complete (resume a sweep with the same --id)\n"
          "  --mpirun PATH      the launcher (default mpirun); --mpirun-arg adds an argument before the program\n"
          "  --train-cmd PATH   the program run as `PATH train ...` (default: this pitstop, or $PIT_SWEEP_TRAIN_CMD)\n"
          "  --train-arg ARG    an extra argument for train (repeatable)\n"
          "  --export seed002-csv  write seed 002's CSV (total time, then each rank's epoch-0 time) of the\n"
          "                     sweep --id (or of every stored run); a directory gets one file per configuration\n",
          PIT_STORE_DEFAULT_PATH);
}

/* Prints one argument so that a POSIX shell reads it back unchanged. */
static void print_quoted(FILE *f, const char *s) {
  int plain = *s != '\0';
  for (const char *p = s; *p && plain; p++)
    plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *p) != NULL;
  if (plain) {
    fputs(s, f);
    return;
  }
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputs("'\\''", f);
    else
      fputc(*s, f);
  }
  fputc('\'', f);
}

/* Appends run to the comma-separated list of failed runs (truncated when long). */
static void note_failure(char *list, size_t cap, const char *run) {
  size_t off = strlen(list);
  if (off + 80 < cap)
    snprintf(list + off, cap - off, "%s%s", off ? ", " : "", run);
}

static int export(const char *kind, const char *out, const char *db, const char *id) {
  if (strcmp(kind, "seed002-csv") != 0)
    return pit_cli_usage("sweep: --export knows seed002-csv (not '%s')", kind);
  if (!out)
    return pit_cli_usage("sweep: --export needs --out FILE|DIR");
  struct pit_err e = {0};
  int nfiles = 0;
  if (pit_sweep_export_seed002(db, id, out, &nfiles, &e))
    return pit_cli_fail(&e);
  pit_cli_note("wrote %d file%s (%s)", nfiles, nfiles == 1 ? "" : "s", out);
  return 0;
}

/* Train's options that a sweep sets itself (per cell, or with a meaning of its own). */
static int sweep_owns(const char *name) {
  return strcmp(name, "batch-size") == 0 || strcmp(name, "db") == 0 || strcmp(name, "run") == 0 ||
         strcmp(name, "out") == 0;
}

/* pitstop sweep's options, as given and parsed: the grid (sp) and what to do */
struct sweep_args {
  struct pit_sweep_spec sp;
  const char *exp, *out, *id;
  int dry, skip_done;
};

/* The options (sweep's own, then train's) into a (defaults first); 0 or the exit status (-1: --help printed). */
static int parse_args(int argc, char **argv, struct sweep_args *a) {
  *a = (struct sweep_args){.dry = 0};
  pit_sweep_spec_init(&a->sp);
  enum { N_OWN = 16, N_TRAIN = 64, O_TRAIN = 1000 };
  static const struct option own[N_OWN] = {
      {"ranks", required_argument, 0, 'R'},      {"batch-size", required_argument, 0, 'B'},
      {"repeat", required_argument, 0, 'k'},     {"hostfile", required_argument, 0, 'H'},
      {"db", required_argument, 0, 'b'},         {"id", required_argument, 0, 'i'},
      {"dry-run", no_argument, 0, 'n'},          {"mpirun", required_argument, 0, 'M'},
      {"mpirun-arg", required_argument, 0, 'a'}, {"train-cmd", required_argument, 0, 't'},
      {"train-arg", required_argument, 0, 'A'},  {"export", required_argument, 0, 'x'},
      {"out", required_argument, 0, 'o'},        {"skip-done", no_argument, 0, 's'},
      {"help", no_argument, 0, 'h'},             {0, 0, 0, 0}};
  /* sweep's own options, then train's (trainopts.h), getopt value O_TRAIN + row */
  struct option opts[N_OWN + N_TRAIN];
  int no = 0;
  while (own[no].name)
    opts[no] = own[no], no++;
  for (int r = 0; pit_train_optdefs[r].name && no < N_OWN + N_TRAIN - 1; r++)
    if (!sweep_owns(pit_train_optdefs[r].name))
      opts[no++] = (struct option){pit_train_optdefs[r].name,
                                   pit_train_optdefs[r].arg ? required_argument : no_argument, 0, O_TRAIN + r};
  opts[no] = (struct option){0, 0, 0, 0};
  optind = 1;
  opterr = 0;
  int c;
  struct pit_err e = {0};
  int64_t v, vals[PIT_SWEEP_MAX_VALUES];
  int nv;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c >= O_TRAIN) {
      if (pit_train_opt_set(&a->sp.train, &pit_train_optdefs[c - O_TRAIN], optarg, &e))
        return pit_cli_usage("sweep: %s", e.msg);
      continue;
    }
    switch (c) {
    case 'R':
      if (pit_sweep_parse_list(optarg, vals, &nv, "--ranks", &e))
        return pit_cli_usage("sweep: %s", e.msg);
      for (int i = 0; i < nv; i++) {
        if (vals[i] > 100000)
          return pit_cli_usage("sweep: --ranks: %lld is too many", (long long)vals[i]);
        a->sp.ranks[i] = (int)vals[i];
      }
      a->sp.nranks = nv;
      break;
    case 'B':
      if (pit_sweep_parse_list(optarg, a->sp.batch, &a->sp.nbatch, "--batch-size", &e))
        return pit_cli_usage("sweep: %s", e.msg);
      break;
    case 'k':
      if (pit_parse_i64(optarg, &v) || v < 1 || v > 1000000000)
        return pit_cli_usage("sweep: --repeat must be a positive integer (not '%s')", optarg);
      a->sp.repeat = (int)(v > 10000 ? 10001 : v);
      break;
    case 'H': a->sp.hostfile = optarg; break;
    case 'b': a->sp.db = optarg; break;
    case 'i': a->id = optarg; break;
    case 'n': a->dry = 1; break;
    case 's': a->skip_done = 1; break;
    case 'M': a->sp.mpirun = optarg; break;
    case 'a':
    case 'A':
      if ((c == 'a' ? a->sp.nmpirun_args : a->sp.ntrain_args) == PIT_SWEEP_MAX_EXTRA)
        return pit_cli_usage("sweep: at most %d --%s options", PIT_SWEEP_MAX_EXTRA, c == 'a' ? "mpirun-arg" : "train-arg");
      if (c == 'a')
        a->sp.mpirun_args[a->sp.nmpirun_args++] = optarg;
      else
        a->sp.train_args[a->sp.ntrain_args++] = optarg;
      break;
    case 't': a->sp.train_cmd = optarg; break;
    case 'x': a->exp = optarg; break;
    case 'o': a->out = optarg; break;
    case 'h':
      usage(stdout);
      return -1;
    default:
      return pit_cli_usage("sweep: unknown option or missing value: '%s' (see 'pitstop sweep --help')",
                           argv[optind - 1]);
    }
  }
  if (optind < argc)
    return pit_cli_usage("sweep: unexpected argument '%s'", argv[optind]);
  return 0;
}

/* The sweep's id (--id, else sweep-DATE) and the training command (not given:
 * $PIT_SWEEP_TRAIN_CMD, else this very program, its path into self). */
static void name_sweep(struct pit_sweep_spec *sp, const char *id, char *self, size_t cap) {
  if (id) {
    snprintf(sp->id, sizeof sp->id, "%s", id);
  } else {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(sp->id, sizeof sp->id, "sweep-%Y%m%d-%H%M%S", &tm);
  }
  if (strcmp(sp->train_cmd, "pitstop") == 0) {
    const char *env = getenv("PIT_SWEEP_TRAIN_CMD");
    ssize_t n;
    if (env && *env)
      sp->train_cmd = env;
    else if ((n = readlink("/proc/self/exe", self, cap - 1)) > 0) {
      self[n] = '\0';
      sp->train_cmd = self;
    }
  }
}

/* --dry-run: each cell's command line, quoted. */
static int print_cells(const struct pit_sweep_cell *cells, int ncells) {
  for (int i = 0; i < ncells; i++) {
    for (int k = 0; k < cells[i].argc; k++) {
      if (k)
        fputc(' ', stdout);
      print_quoted(stdout, cells[i].argv[k]);
    }
    fputc('\n', stdout);
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

/* Every cell run in turn (stored ones skipped with --skip-done); returns the exit status. */
static int run_cells(const struct pit_sweep_spec *sp, struct pit_sweep_cell *cells, int ncells, int skip_done) {
  struct pit_err e = {0};
  for (int i = 0; i < ncells && !skip_done; i++)
    if (cells[i].stored != PIT_SWEEP_ABSENT) {
      pit_err_set(&e, PIT_ESTATE, "sweep %s: run %s is already in '%s' (running it again would mix two attempts)",
                  sp->id, cells[i].run, sp->db);
      pit_err_hint(&e, "--skip-done completes the sweep, or choose another --id");
      return pit_cli_fail(&e);
    }
  int failed = 0, rc = 0, skipped = 0;
  char failures[1024] = "";
  for (int i = 0; i < ncells; i++) {
    int status = 0;
    if (cells[i].stored == PIT_SWEEP_COMPLETE) {
      pit_cli_note("sweep %s [%d/%d] %s: already stored, skipped", sp->id, i + 1, ncells, cells[i].run);
      skipped++;
      continue;
    }
    if (cells[i].stored == PIT_SWEEP_PARTIAL) {
      failed++;
      note_failure(failures, sizeof failures, cells[i].run);
      pit_cli_note("sweep %s [%d/%d] %s: FAILED: an interrupted earlier attempt is stored (no end "
                   "record); not run again", sp->id, i + 1, ncells, cells[i].run);
      continue;
    }
    double t0 = pit_now();
    if (pit_sweep_cell_run(&cells[i], &status, &e)) {
      rc = pit_cli_fail(&e); /* the launcher itself cannot run: no later cell could either */
      break;
    }
    double dt = pit_now() - t0;
    if (status == 0) {
      pit_cli_note("sweep %s [%d/%d] %s: ok (%.1f s)", sp->id, i + 1, ncells, cells[i].run, dt);
    } else {
      failed++;
      note_failure(failures, sizeof failures, cells[i].run);
      pit_cli_note("sweep %s [%d/%d] %s: FAILED (%s %d, %.1f s); going on", sp->id, i + 1, ncells,
                   cells[i].run, status > 128 ? "signal" : "exit status", status > 128 ? status - 128 : status, dt);
    }
  }
  if (!rc) {
    if (failed) {
      pit_cli_note("sweep %s: %d of %d runs failed: %s", sp->id, failed, ncells, failures);
      rc = 1;
    } else {
      pit_cli_note("sweep %s: %d runs stored in %s%s", sp->id, ncells - skipped, sp->db,
                   skipped ? " (the others were already there)" : "");
    }
  }
  return rc;
}

int pit_cmd_sweep(int argc, char **argv) {
  struct sweep_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? 0 : rc;
  struct pit_sweep_spec *sp = &a.sp;
  if (!sp->db)
    sp->db = PIT_STORE_DEFAULT_PATH;
  if (a.exp)
    return export(a.exp, a.out, sp->db, a.id);
  if (a.out)
    return pit_cli_usage("sweep: --out belongs to --export");
  char self[4096];
  name_sweep(sp, a.id, self, sizeof self);
  struct pit_err e = {0};
  struct pit_sweep_cell *cells;
  int ncells;
  if (pit_sweep_plan(sp, &cells, &ncells, &e))
    return e.code == PIT_EARG ? pit_cli_usage("sweep: %s", e.msg) : pit_cli_fail(&e);
  if (a.dry)
    rc = print_cells(cells, ncells);
  else if (pit_sweep_stored(sp->db, cells, ncells, &e))
    rc = pit_cli_fail(&e);
  else
    rc = run_cells(sp, cells, ncells, a.skip_done);
  pit_sweep_cells_free(cells, ncells);
  return rc;
}

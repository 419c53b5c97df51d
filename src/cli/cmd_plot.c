/* cmd_plot.c — `pitstop plot`: a chart (PNG or SVG, drawn by gnuplot) of runs
 * from the store or from JSON Lines files. The work is in the report module
 * (src/report/plot.c); this file reads options and prints errors.
 * Invariant: the output file is written atomically, and not at all on error. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/report.h"
#include "pitstop/store.h"

#ifndef PIT_CATALOG_DIR /* where `cmake --install` puts catalogs/ (set in CMakeLists.txt) */
#define PIT_CATALOG_DIR "/usr/local/share/pitstop/catalogs"
#endif

#define MAX_EVENT_FILES 64
#define MAX_RUNS 256

static void usage(FILE *f) {
  fprintf(f,
          "usage: pitstop plot --kind steps|batch|scaling|cost --out FILE.png|FILE.svg\n"
          "                    [--db PATH | --events FILE...] [--run ID]... [--title TEXT]\n"
          "                    [--metric tp|sample|total] [--catalog FILE] [--itype NAME]\n"
          "                    [--size WxH]\n"
          "\n"
          "Draws a chart through gnuplot (docs/plot.md):\n"
          "  steps    one run: step time of every iteration, one line per epoch, with t_p and its interval\n"
          "  batch    time against global batch size, one line per configuration, bars = sd over repeats\n"
          "  scaling  speedup and parallel efficiency against ranks (throughput = batch / t_p)\n"
          "  cost     samples per dollar per configuration (needs a price catalog)\n"
          "\n"
          "  --db PATH         the store to read (default ./%s)\n"
          "  --events FILE     read JSON Lines records instead (repeatable)\n"
          "  --run ID          only this run (repeatable; the steps chart needs exactly one run)\n"
          "  --metric M        batch chart: tp (time per iteration, default), sample (per sample), total\n"
          "  --catalog FILE    cost chart: instance types and prices (default ./catalogs/aws.tsv,\n"
          "                    else %s/aws.tsv)\n"
          "  --itype NAME      cost chart: instance type of runs that record none\n"
          "  --title TEXT      replaces the default title\n"
          "  --size WxH        picture size in pixels (default 1000x600)\n",
          PIT_STORE_DEFAULT_PATH, PIT_CATALOG_DIR);
}

int pit_cmd_plot(int argc, char **argv) {
  static const struct option opts[] = {{"kind", required_argument, 0, 'k'},   {"out", required_argument, 0, 'o'},
                                       {"db", required_argument, 0, 'd'},     {"events", required_argument, 0, 'e'},
                                       {"run", required_argument, 0, 'r'},    {"title", required_argument, 0, 't'},
                                       {"metric", required_argument, 0, 'm'}, {"catalog", required_argument, 0, 'c'},
                                       {"itype", required_argument, 0, 'i'},  {"size", required_argument, 0, 's'},
                                       {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  struct pit_plot_opts po;
  pit_plot_opts_init(&po);
  const char *db = NULL, *catalog = NULL;
  const char *events[MAX_EVENT_FILES];
  char *runs[MAX_RUNS];
  int nevents = 0, nruns = 0, have_kind = 0;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'k':
      if (pit_plot_kind_parse(optarg, &po.kind))
        return pit_cli_usage("plot: --kind must be steps, batch, scaling or cost (not '%s')", optarg);
      have_kind = 1;
      break;
    case 'o':
      po.out = optarg;
      break;
    case 'd':
      db = optarg;
      break;
    case 'e':
      if (nevents == MAX_EVENT_FILES)
        return pit_cli_usage("plot: at most %d --events files", MAX_EVENT_FILES);
      events[nevents++] = optarg;
      break;
    case 'r':
      if (nruns == MAX_RUNS)
        return pit_cli_usage("plot: at most %d --run options", MAX_RUNS);
      runs[nruns++] = optarg;
      break;
    case 't':
      po.title = optarg;
      break;
    case 'm':
      if (pit_plot_metric_parse(optarg, &po.metric))
        return pit_cli_usage("plot: --metric must be tp, sample or total (not '%s')", optarg);
      break;
    case 'c':
      catalog = optarg;
      break;
    case 'i':
      po.itype = optarg;
      break;
    case 's':
      if (sscanf(optarg, "%dx%d", &po.width, &po.height) != 2 || po.width < 200 || po.height < 150 ||
          po.width > 10000 || po.height > 10000)
        return pit_cli_usage("plot: --size must be WxH in pixels, 200x150 to 10000x10000 (not '%s')", optarg);
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      return pit_cli_usage("plot: unknown option or missing value: '%s' (see 'pitstop plot --help')",
                           argv[optind - 1]);
    }
  }
  if (optind < argc)
    return pit_cli_usage("plot: unexpected argument '%s' (runs are chosen with --run)", argv[optind]);
  if (!have_kind)
    return pit_cli_usage("plot: --kind is required (steps, batch, scaling or cost)");
  if (!po.out)
    return pit_cli_usage("plot: --out FILE.png|FILE.svg is required");
  if (db && nevents)
    return pit_cli_usage("plot: give either --db or --events, not both");

  struct pit_err e = {0};
  struct pit_catalog cat = {0};
  struct pit_runset rs;
  pit_runset_init(&rs);
  int rc = 0;
  if (po.kind == PIT_PLOT_COST) {
    /* default: ./catalogs/aws.tsv (a source tree), else the installed copy */
    if (!catalog && access("catalogs/aws.tsv", F_OK) != 0)
      catalog = PIT_CATALOG_DIR "/aws.tsv";
    rc = pit_catalog_load(&cat, catalog ? catalog : "catalogs/aws.tsv", &e);
    if (rc == PIT_ENOTFOUND)
      pit_err_hint(&e, "give the price catalog with --catalog FILE (the source tree has catalogs/aws.tsv)");
    po.catalog = &cat;
  }
  const char *src = db ? db : PIT_STORE_DEFAULT_PATH;
  char what[600];
  if (nevents) {
    for (int i = 0; i < nevents && !rc; i++)
      rc = pit_runset_load_events(&rs, events[i], runs, nruns, &e);
    snprintf(what, sizeof what, "the --events file%s", nevents > 1 ? "s" : "");
  } else if (!rc) {
    rc = pit_runset_load_store(&rs, src, runs, nruns, &e);
    snprintf(what, sizeof what, "'%s'", src);
  }
  if (!rc)
    rc = pit_runset_check(&rs, runs, nruns, what, &e);
  if (!rc)
    rc = pit_runset_summarize(&rs, &e);
  if (!rc)
    rc = pit_plot(&rs, &po, &e);
  pit_runset_release(&rs);
  pit_catalog_release(&cat);
  if (rc)
    return pit_cli_fail(&e);
  pit_cli_note("wrote %s", po.out);
  return 0;
}

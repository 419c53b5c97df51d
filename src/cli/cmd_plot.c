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

#define MAX_RUNS 256

static void usage(FILE *f) {
  fprintf(f,
          "usage: pitstop plot --kind steps|batch|scaling|cost|timeline --out FILE.png|FILE.svg\n"
          "                    [--db PATH | --events FILE...] [--run ID]... [--title TEXT]\n"
          "                    [--metric tp|sample|total] [--catalog FILE] [--region NAME] [--itype NAME]\n"
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
          "  --catalog FILE    cost chart: instance types and prices (default aws.tsv of the catalogs\n"
          "                    beside the program or of its source tree: docs/catalog.md)\n"
          "  --region NAME     cost chart: prices of this region (catalogs with a region column,\n"
          "                    e.g. SkyPilot's vms.csv)\n"
          "  --itype NAME      cost chart: instance type, or membership TYPE:NODES[xRANKS]+..., of runs\n"
          "                    that record none\n"
          "  --title TEXT      replaces the default title\n"
          "  --size WxH        picture size in pixels (default 1000x600)\n",
          PIT_STORE_DEFAULT_PATH);
}

/* pitstop plot's options, as given and parsed */
struct plot_args {
  struct pit_plot_opts po;
  struct pit_cli_source src;
  const char *catalog, *region, *last_events;
  char *runs[MAX_RUNS];
  int nruns, have_kind, timeline;
};

/* The options into a (defaults first); 0 or the exit status (-1: --help printed). */
static int parse_args(int argc, char **argv, struct plot_args *a) {
  *a = (struct plot_args){.nruns = 0};
  pit_plot_opts_init(&a->po);
  static const struct option opts[] = {{"kind", required_argument, 0, 'k'},   {"out", required_argument, 0, 'o'},
                                       {"db", required_argument, 0, 'd'},     {"events", required_argument, 0, 'e'},
                                       {"run", required_argument, 0, 'r'},    {"title", required_argument, 0, 't'},
                                       {"metric", required_argument, 0, 'm'}, {"catalog", required_argument, 0, 'c'},
                                       {"itype", required_argument, 0, 'i'},  {"size", required_argument, 0, 's'},
                                       {"region", required_argument, 0, 'R'},
                                       {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  optind = 1;
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    switch (c) {
    case 'k':
      if (strcmp(optarg, "timeline") == 0) { /* an elastic run's events file (pitstop run) */
        a->timeline = a->have_kind = 1;
        break;
      }
      if (pit_plot_kind_parse(optarg, &a->po.kind))
        return pit_cli_usage("plot: --kind must be steps, batch, scaling or cost (not '%s')", optarg);
      a->have_kind = 1;
      break;
    case 'o':
      a->po.out = optarg;
      break;
    case 'd':
    case 'e':
      if (c == 'e')
        a->last_events = optarg;
      if (pit_cli_source_opt(&a->src, "plot", c == 'd', optarg))
        return 2;
      break;
    case 'r':
      if (a->nruns == MAX_RUNS)
        return pit_cli_usage("plot: at most %d --run options", MAX_RUNS);
      a->runs[a->nruns++] = optarg;
      break;
    case 't':
      a->po.title = optarg;
      break;
    case 'm':
      if (pit_plot_metric_parse(optarg, &a->po.metric))
        return pit_cli_usage("plot: --metric must be tp, sample or total (not '%s')", optarg);
      break;
    case 'c':
      a->catalog = optarg;
      break;
    case 'i':
      a->po.itype = optarg;
      break;
    case 'R':
      a->region = optarg;
      break;
    case 's':
      if (sscanf(optarg, "%dx%d", &a->po.width, &a->po.height) != 2 || a->po.width < 200 || a->po.height < 150 ||
          a->po.width > 10000 || a->po.height > 10000)
        return pit_cli_usage("plot: --size must be WxH in pixels, 200x150 to 10000x10000 (not '%s')", optarg);
      break;
    case 'h':
      usage(stdout);
      return -1;
    default:
      return pit_cli_bad_option("plot", argv);
    }
  }
  if (optind < argc)
    return pit_cli_usage("plot: unexpected argument '%s' (runs are chosen with --run)", argv[optind]);
  if (!a->have_kind)
    return pit_cli_usage("plot: --kind is required (steps, batch, scaling or cost)");
  if (!a->po.out)
    return pit_cli_usage("plot: --out FILE.png|FILE.svg is required");
  if (a->timeline && !a->last_events)
    return pit_cli_usage("plot: --kind timeline needs --events FILE (a pitstop run's events file)");
  return 0;
}

int pit_cmd_plot(int argc, char **argv) {
  struct plot_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc < 0 ? 0 : rc;
  struct pit_plot_opts po = a.po;
  if (a.timeline) { /* an elastic run's events file (pitstop run) */
    struct pit_err te = {0};
    if (pit_plot_timeline(a.last_events, &po, &te) < 0)
      return pit_cli_fail(&te);
    pit_cli_note("plot: wrote %s", po.out);
    return 0;
  }
  struct pit_err e = {0};
  struct pit_catalog cat = {0};
  struct pit_runset rs;
  pit_runset_init(&rs);
  const char *catalog = a.catalog;
  if (po.kind == PIT_PLOT_COST) {
    if (!catalog && !(catalog = pit_cli_catalog("aws.tsv", &e)))
      rc = e.code;
    else if ((rc = pit_catalog_load_region(&cat, catalog, a.region, &e)) == PIT_ENOTFOUND)
      pit_err_hint(&e, "give the price catalog with --catalog FILE");
    po.catalog = &cat;
  }
  if (rc) {
    pit_catalog_release(&cat);
    return pit_cli_fail(&e);
  }
  rc = pit_cli_load_runs(&rs, &a.src, "plot", a.runs, a.nruns);
  if (!rc && pit_plot(&rs, &po, &e))
    rc = pit_cli_fail(&e);
  pit_runset_release(&rs);
  pit_catalog_release(&cat);
  if (rc)
    return rc;
  pit_cli_note("wrote %s", po.out);
  return 0;
}

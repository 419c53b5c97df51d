/* cmd_status.c — `pitstop status [RUN|DIR|FILE]`: an elastic run's status from
 * any terminal, live or finished (docs/run.md "pitstop status"). Options only:
 * the report module finds the run, folds its events and writes the table or
 * JSON (src/report/status.c); --watch reprints here, every S seconds (a
 * monotonic sleep), until the run is no longer running.
 * Invariant: reads only; never takes the run's lock. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "pitstop/catalog.h"
#include "pitstop/report.h"

static const struct pit_cli_opt opts[] = {
    {"format", 1, 'f', "F", "table (default) or json (one object; fields in docs/run.md)"},
    {"catalog", 1, 'c', "FILE", "instance types, to bill each node as its type bills (default: the\n"
                                "run's own, from the catalog rows its node records carry; a run\n"
                                "written before them: the local provider's catalog; a type it lacks\n"
                                "is billed on raw seconds)"},
    {"decisions", 1, 'd', "N", "the last N decisions (default 5; -1: all)"},
    {"watch", 2, 'w', "S", "(--watch or --watch=S) print again every S seconds (default 2) until\n"
                           "the run is no longer running"},
    {"html", 1, 'H', "FILE", "write report.html to FILE instead: one self-contained page (no network) with\n"
                             "the timeline chart, the run against fixed memberships (cost and time\n"
                             "runs), generations, nodes with billed cost and decisions"},
};
static const struct pit_cli_cmd cmd = {
    "usage: pitstop status [RUN|DIR|FILE] [--format table|json] [--catalog FILE] [--decisions N]\n"
    "                      [--watch[=S]] [--html FILE]\n"
    "An elastic run's status, from any terminal while it runs or after: its generation, membership,\n"
    "steps, t_p, spend (billed), the finish and cost predicted with 95% intervals, the last decisions\n"
    "with their reasons, and the nodes. RUN: a run id under runs/ (pitstop run's default directory),\n"
    "DIR: a run directory (--checkpoint-dir), FILE: its events file; none: the newest under runs/.\n",
    opts, PIT_CLI_NOPTS(opts), NULL};

/* report.html at out: the timeline drawn beside it for the while, embedded, removed. */
static int html(const char *arg, const struct pit_catalog *cat, const struct pit_catalog *fallback,
                const char *catalog, const char *out) {
  struct pit_err e = {0};
  if (pit_cli_report_html(arg, cat, fallback, catalog, NULL, NULL, out, &e) < 0)
    return pit_cli_fail(&e);
  pit_cli_note("wrote %s", out);
  return 0;
}

static int show(const char *arg, const struct pit_catalog *cat, const struct pit_catalog *fallback,
                enum pit_summary_format fmt, int ndec, int *running) {
  struct pit_err e = {0};
  struct pit_status s;
  if (pit_status_load(&s, arg, cat, fallback, &e) < 0)
    return pit_cli_fail(&e);
  int rc = pit_status_write(stdout, &s, fmt, ndec, &e) < 0 ? pit_cli_fail(&e) : 0;
  fflush(stdout);
  *running = strcmp(s.state, "running") == 0;
  pit_status_release(&s);
  return rc;
}

int pit_cmd_status(int argc, char **argv) {
  enum pit_summary_format fmt = PIT_SUMMARY_TABLE;
  const char *catalog = NULL;
  int ndec = 5;
  double watch = NAN;
  const char *html_out = NULL;
  struct pit_cli_getopt go;
  pit_cli_getopt_init(&go, argc, argv, &cmd);
  int c;
  char *end;
  while ((c = pit_cli_getopt_next(&go)) != -1) {
    switch (c) {
    case 'f':
      if (pit_summary_format_parse(optarg, &fmt) < 0 || fmt == PIT_SUMMARY_CSV)
        return pit_cli_usage("status: --format %s: table or json", optarg);
      break;
    case 'c':
      catalog = optarg;
      break;
    case 'd':
      ndec = (int)strtol(optarg, &end, 10);
      if (*end || ndec < -1)
        return pit_cli_usage("status: --decisions %s: a count, or -1 for all", optarg);
      break;
    case 'w':
      watch = optarg ? strtod(optarg, &end) : 2;
      if ((optarg && *end) || !(watch > 0) || watch > 86400)
        return pit_cli_usage("status: --watch %s: seconds > 0", optarg);
      break;
    case 'H':
      html_out = optarg;
      break;
    case 'h':
      pit_cli_help(stdout, &cmd);
      return 0;
    default:
      return pit_cli_bad_option("status", argv);
    }
  }
  if (argc - optind > 1)
    return pit_cli_usage("status: one run at a time (see 'pitstop status --help')");
  const char *arg = optind < argc ? argv[optind] : NULL;
  struct pit_err e = {0};
  /* --catalog prices the run; else its own catalog rows (pit_status_load), else the default catalog */
  struct pit_catalog cat = {0};
  struct pit_err nf = {0}; /* no default found: a run without catalog rows is then not priced */
  const char *file = catalog ? catalog : pit_cli_catalog("local.tsv", &nf);
  if (file && pit_catalog_load(&cat, file, &e) < 0)
    return pit_cli_fail(&e);
  const struct pit_catalog *given = catalog ? &cat : NULL, *fallback = file && !catalog ? &cat : NULL;
  int running = 0, rc;
  if (html_out) {
    rc = html(arg, given, fallback, catalog, html_out);
    pit_catalog_release(&cat);
    return rc;
  }
  while ((rc = show(arg, given, fallback, fmt, ndec, &running)) == 0 && running && isfinite(watch)) {
    struct timespec ts = {(time_t)watch, (long)((watch - floor(watch)) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
    }
    if (fmt == PIT_SUMMARY_TABLE)
      fputs("\n", stdout);
  }
  pit_catalog_release(&cat);
  return rc;
}

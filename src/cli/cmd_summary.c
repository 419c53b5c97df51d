/* cmd_summary.c — `pitstop summary`: statistics per run and per configuration
 * group, from the store (default ./pitstop.db) or straight from JSON Lines
 * files, as a table (terminal), CSV or JSON. Options only: the runs are loaded
 * by the store module's run set (cli/runs.c), grouped by the report module and
 * printed by its summary printers (src/report/summary_fmt.c); field names in
 * docs/analysis.md.
 * Invariant: reads only; prints results on stdout, diagnostics on stderr;
 * exits non-zero when nothing could be summarized. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pitstop/report.h"
#include "pitstop/store.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: pitstop summary [--db PATH] [--events FILE]... [--group-by FIELD[,FIELD...]]\n"
          "                       [--format table|csv|json] [RUN...]\n"
          "\n"
          "Statistics of step, data, epoch, validation and init times per run and per configuration:\n"
          "count, mean, median, sd, min, max, p5/p95; the warm-up (MSER-5); the PIT time t_p with its 95%%\n"
          "interval (batch means); the slowest rank; totals and shares of the run time.\n"
          "\n"
          "  --db PATH          the store to read (default ./%s)\n"
          "  --events FILE      read JSON Lines records instead of the store (repeatable)\n"
          "  --group-by FIELDS  configuration fields that define a group (default:\n"
          "                     model,batch,ranks,nodes,itype,threads); any key of the init config\n"
          "  --format F         table (default), csv or json (field names in docs/analysis.md)\n"
          "  RUN...             only these runs\n",
          PIT_STORE_DEFAULT_PATH);
}

int pit_cmd_summary(int argc, char **argv) {
  struct pit_cli_source src = {0};
  enum pit_summary_format fmt = PIT_SUMMARY_TABLE;
  const char *group_spec = NULL;
  static const struct option opts[] = {{"db", required_argument, 0, 'd'},
                                       {"events", required_argument, 0, 'e'},
                                       {"group-by", required_argument, 0, 'g'},
                                       {"format", required_argument, 0, 'f'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
  optind = 1;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (o == 'd' || o == 'e') {
      if (pit_cli_source_opt(&src, "summary", o == 'd', optarg))
        return 2;
    } else if (o == 'g') {
      group_spec = optarg;
    } else if (o == 'f') {
      if (pit_summary_format_parse(optarg, &fmt))
        return pit_cli_usage("summary: --format must be table, csv or json (not '%s')", optarg);
    } else if (o == 'h') {
      usage(stdout);
      return 0;
    } else {
      return pit_cli_bad_option("summary", argv);
    }
  }
  struct pit_err e = {0};
  struct pit_groups groups;
  char gbuf[512];
  if (pit_groups_parse(&groups, group_spec, gbuf, sizeof gbuf, &e))
    return pit_cli_usage("summary: %s", e.msg);

  struct pit_runset rs;
  pit_runset_init(&rs);
  int rc = pit_cli_load_runs(&rs, &src, "summary", argv + optind, argc - optind);
  if (!rc && pit_groups_make(&groups, &rs, &e))
    rc = pit_cli_fail(&e);
  if (!rc) {
    char title[600];
    if (group_spec)
      snprintf(title, sizeof title, "groups by %s", group_spec);
    else
      snprintf(title, sizeof title, "configurations");
    if (pit_summary_write(stdout, fmt, &rs, &groups, title, &e))
      rc = pit_cli_error("cannot write the summary to standard output");
  }
  pit_groups_release(&groups);
  pit_runset_release(&rs);
  return rc;
}

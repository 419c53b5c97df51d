/* cli.h — shared by the subcommands of the `pitstop` command: each lives in
 * cmd_<name>.c and exports int pit_cmd_<name>(int argc, char **argv), returning
 * the process exit status. Only the CLI prints errors (pit_cli_fail). */
#ifndef PIT_CLI_H
#define PIT_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "pitstop/util.h"

int pit_cmd_train(int argc, char **argv);
int pit_cmd_parse(int argc, char **argv);
int pit_cmd_summary(int argc, char **argv);
int pit_cmd_plot(int argc, char **argv);
int pit_cmd_sweep(int argc, char **argv);
int pit_cmd_run(int argc, char **argv);
int pit_cmd_node_exec(int argc, char **argv);
int pit_cmd_node_check(int argc, char **argv);
int pit_cmd_predict(int argc, char **argv);
int pit_cmd_profile(int argc, char **argv);
int pit_cmd_simulate(int argc, char **argv);
int pit_cmd_status(int argc, char **argv);

/* A command's own options as one table (name without "--", has_arg, the code
 * pit_cli_getopt_next returns for it (0 where no getopt reads the table), the
 * value's name for --help, its help, lines split by '\n'): parsed, found by
 * name, printed. Strings are static. */
struct pit_cli_opt {
  const char *name;
  int has_arg;
  int val;
  const char *arg, *help;
};
/* The entry of t[0..n-1] named name[0..len-1], or NULL. */
const struct pit_cli_opt *pit_cli_opt_find(const struct pit_cli_opt *t, int n, const char *name, size_t len);
/* "  --name ARG   help" lines, the left column width wide (a help's further
 * lines indented under its first). */
void pit_cli_opts_print(FILE *f, const struct pit_cli_opt *t, int n, int width);

/* A command's options and --help in one place: its usage lines (and any prose
 * before the options), its option table, and text after the options (or NULL).
 * --help (val 'h') is every command's: neither the table nor the usage lists it. */
struct pit_cli_cmd {
  const char *usage;
  const struct pit_cli_opt *opts; /* nopts rows, at most PIT_CLI_MAX_OPTS */
  int nopts;
  const char *epilog;
};
#define PIT_CLI_NOPTS(t) ((int)(sizeof(t) / sizeof((t)[0])))
/* usage, the options (with --help) in a column as wide as the longest, epilog. */
void pit_cli_help(FILE *f, const struct pit_cli_cmd *c);

/* getopt_long over a command's option table:
 *   struct pit_cli_getopt go;
 *   pit_cli_getopt_init(&go, argc, argv, &cmd);
 *   while ((c = pit_cli_getopt_next(&go)) != -1)
 *     switch (c) { case 'n': ... parse optarg, name it go.opt->name ...;
 *                  case 'h': pit_cli_help(stdout, &cmd); ...; default: pit_cli_bad_option(...) }
 * next returns the row's val with optarg set and go.opt its row ('h' for --help),
 * '?' for an unknown option or a missing value (getopt prints nothing), -1 after
 * the last option (optind then indexes the first operand). */
#define PIT_CLI_MAX_OPTS 48
struct pit_cli_getopt {
  const struct pit_cli_opt *opt;              /* the row last returned (in t), or NULL */
  const struct pit_cli_opt *t;                /* the table (n rows); borrowed */
  int n;
  int argc;
  char **argv;                                /* borrowed */
  struct option lo[PIT_CLI_MAX_OPTS + 2];     /* the table and --help, as getopt_long reads them */
};
void pit_cli_getopt_init(struct pit_cli_getopt *g, int argc, char **argv, const struct pit_cli_cmd *c);
int pit_cli_getopt_next(struct pit_cli_getopt *g);

/* This program's path (/proc/self/exe; static storage), NULL if unknown. */
const char *pit_cli_self_exe(void);
/* The default catalog NAME ("local.tsv", "aws.tsv") for this program
 * (pit_catalog_default_path with pit_cli_self_exe(); static storage), or NULL
 * with e saying where it looked. */
const char *pit_cli_catalog(const char *name, struct pit_err *e);

/* Every message to stderr goes through these (src/cli/cli.c), each one line
 * starting "pitstop: ". */
/* "pitstop: <msg>" and, if any, "pitstop: hint: <hint>"; returns 1. */
int pit_cli_fail(const struct pit_err *e);
/* "pitstop: <formatted>"; returns 2 (usage error). */
int pit_cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "pitstop: <formatted>"; returns 1 (a failure without a struct pit_err). */
int pit_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "pitstop: warning: <formatted>": something was skipped or is doubtful; the command goes on. */
void pit_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "pitstop: <formatted>": what the command did (files written, a sweep's cell done). */
void pit_cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A command (argv, NULL-terminated) run once per node on up to `most` nodes that names no $PITSTOP_
 * variable: said, one_node the option that asks for one node (cmd_run.c; pitstop run and pitstop
 * profile -- CMD). */
void pit_cli_warn_copies(char *const *cmd, int most, const char *one_node);
/* --vary OPT[,OPT...] (pitstop run and pitstop profile -- CMD): the option names into out[0..max-1),
 * NULL-terminated, pointing into buf (a copy of arg); arg NULL: none. Returns the count, or -1 (said)
 * when there are more than max - 1 or one is empty. */
int pit_cli_vary(const char *arg, char *buf, size_t n, const char **out, int max);

/* After getopt_long returned '?' or ':' for command cmd: "cmd: unknown option or
 * missing value: 'X' (see 'pitstop cmd --help')"; returns 2. */
int pit_cli_bad_option(const char *cmd, char **argv);

/* The runs a report is drawn from (summary, plot): --db PATH or --events FILE... */
#define PIT_CLI_MAX_EVENTS 256
struct pit_cli_source {
  const char *db;                          /* NULL: the default store */
  const char *events[PIT_CLI_MAX_EVENTS];  /* borrowed from argv */
  int nevents;
};
/* Takes the value of --db (isdb) or of --events; returns 0, or 2 (usage error). */
int pit_cli_source_opt(struct pit_cli_source *src, const char *cmd, int isdb, const char *arg);
/* Loads and summarizes the runs of src (only[0..nonly-1], or all) through the
 * report module's loader, printing its warnings; returns 0 or the exit status. */
struct pit_runset;
int pit_cli_load_runs(struct pit_runset *rs, const struct pit_cli_source *src, const char *cmd, char *const *only,
                      int nonly);

/* A run's decisions and its cost against fixed memberships (run_report.c),
 * for `pitstop run` (cost/time) and `pitstop simulate --replay`: both read the
 * run's fold (record.h, the run log) and price it with one catalog. */
#include "pitstop/control.h"
struct pit_cli_replay {
  int have_log;                 /* log loaded (the decisions can be printed) */
  struct pit_runlog log;        /* the run's fold */
  int have_cat;
  struct pit_catalog cat;       /* --catalog, or the local one; the replay's o.catalog */
  struct pit_replay_opts o;
  char types[1024];             /* the types the policy may choose, as a list */
  char from_run[512];           /* the run's own settings as its decisions recorded them ("": none recorded) */
  struct pit_replay r;          /* the replay (pit_replay_log) */
};
/* Loads events' fold and the catalog, sets the replay options (policy: NULL
 * cost; --nnodes text: NULL 1:any; deadline/budget NaN: none; types: NULL the
 * first generation's; ranks_per_node >= 1) and replays the run. Errors name
 * the file; x->have_log says whether the fold was read before one. x is
 * released by pit_cli_replay_release in every case. */
int pit_cli_replay_load(const char *events, const char *catalog, const char *types, const char *nnodes,
                        const char *policy, double deadline, double budget, int ranks_per_node,
                        struct pit_cli_replay *x, struct pit_err *e);
void pit_cli_replay_release(struct pit_cli_replay *x);
/* Prints every decision of the fold: run seconds, step, what → to and the
 * reason; consecutive keeps as one line. */
void pit_cli_print_decisions(const struct pit_runlog *log);
/* Prints the run's cost and time beside each fixed membership's (r->fixed). */
void pit_cli_print_fixed(const struct pit_replay *r, double run_cost, double run_time);
/* The timeline chart of a run's events file drawn to png (pit_plot_timeline, default options). */
int pit_cli_timeline(const char *events, const char *png, struct pit_err *e);
/* report.html at out (pit_status_html) for the run arg (run id, directory or events file), billed
 * with cat (NULL: the run's own catalog from its node records' rows, else fallback, else raw seconds:
 * pit_status_load); png: its timeline drawn already, or NULL to draw one beside out for the while;
 * x: the run's replay against fixed memberships (pit_cli_replay_load), or NULL to make one here with
 * catalog (a path; NULL: the run's own, else the default) when the run's decisions weigh cost or time. */
int pit_cli_report_html(const char *arg, const struct pit_catalog *cat, const struct pit_catalog *fallback,
                        const char *catalog, const char *png, const struct pit_cli_replay *x, const char *out,
                        struct pit_err *e);

#endif

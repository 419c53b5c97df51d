/* main.c — `pitstop <command> [--options]`: dispatches to one cmd_<name>.c per
 * subcommand. Subcommands not linked into this build are reported as such. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* Weak so a build that lacks a subcommand still links (and says so). */
#pragma weak pit_cmd_train
#pragma weak pit_cmd_parse
#pragma weak pit_cmd_summary
#pragma weak pit_cmd_plot
#pragma weak pit_cmd_sweep
#pragma weak pit_cmd_run
#pragma weak pit_cmd_node_exec
#pragma weak pit_cmd_node_check
#pragma weak pit_cmd_predict
#pragma weak pit_cmd_profile
#pragma weak pit_cmd_simulate
#pragma weak pit_cmd_status

struct command {
  const char *name;
  int (*fn)(int, char **);
  const char *help;
};

static void usage(FILE *f, const struct command *cmds, int n) {
  fprintf(f, "usage: pitstop <command> [options]\n\ncommands:\n");
  for (int i = 0; i < n; i++)
    fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
  fprintf(f, "\n'pitstop <command> --help' shows a command's options.\n");
}

int main(int argc, char **argv) {
  const struct command cmds[] = {
      {"train", pit_cmd_train, "train a model (data-parallel under mpirun), recording every iteration"},
      {"parse", pit_cmd_parse, "turn training logs into iteration records"},
      {"summary", pit_cmd_summary, "statistics per run and configuration"},
      {"plot", pit_cmd_plot, "charts (PNG/SVG) through gnuplot"},
      {"sweep", pit_cmd_sweep, "run a grid of configurations, storing every run"},
      {"run", pit_cmd_run, "train on nodes that come and go (the elastic controller)"},
      {"node-exec", pit_cmd_node_exec, "(internal) run a command inside a local node"},
      {"node-check", pit_cmd_node_check, "(internal) check or release an ssh host for a run"},
      {"predict", pit_cmd_predict, "the whole job's time and cost from measured iterations"},
      {"profile", pit_cmd_profile, "measure candidate memberships and rank them for a job (cost or time)"},
      {"simulate", pit_cmd_simulate, "spot or on-demand under a deadline, replayed over a spot trace"},
      {"status", pit_cmd_status, "an elastic run's status, live or finished, from any terminal"},
  };
  int n = (int)(sizeof cmds / sizeof cmds[0]);
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
    usage(argc < 2 ? stderr : stdout, cmds, n);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("pitstop 0.1.0\n");
    return 0;
  }
  for (int i = 0; i < n; i++) {
    if (strcmp(argv[1], cmds[i].name) == 0) {
      if (!cmds[i].fn)
        return pit_cli_usage("command '%s' is not part of this build", argv[1]);
      return cmds[i].fn(argc - 1, argv + 1);
    }
  }
  pit_cli_usage("unknown command '%s'", argv[1]);
  usage(stderr, cmds, n);
  return 2;
}

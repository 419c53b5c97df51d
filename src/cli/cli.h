/* cli.h — shared by the subcommands of the `pitstop` command: each lives in
 * cmd_<name>.c and exports int pit_cmd_<name>(int argc, char **argv), returning
 * the process exit status. Only the CLI prints errors (pit_cli_fail). */
#ifndef PIT_CLI_H
#define PIT_CLI_H

#include "pitstop/util.h"

int pit_cmd_train(int argc, char **argv);
int pit_cmd_parse(int argc, char **argv);
int pit_cmd_summary(int argc, char **argv);
int pit_cmd_plot(int argc, char **argv);
int pit_cmd_sweep(int argc, char **argv);
int pit_cmd_predict(int argc, char **argv);

/* Prints "pitstop: <msg>" and, if any, "pitstop: hint: <hint>" to stderr; returns 1. */
int pit_cli_fail(const struct pit_err *e);
/* Prints "pitstop: <formatted>" to stderr; returns 2 (usage error). */
int pit_cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

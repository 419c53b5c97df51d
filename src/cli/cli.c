/* cli.c — the command's messages on stderr: errors, usage errors, warnings and
 * notes, each one line prefixed "pitstop: " (warnings "pitstop: warning: ").
 * Invariant: the subcommands write to stderr only through these. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

static void vline(const char *prefix, const char *fmt, va_list ap) {
  fputs(prefix, stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

int pit_cli_fail(const struct pit_err *e) {
  fprintf(stderr, "pitstop: %s\n", e->msg[0] ? e->msg : "unknown error");
  if (e->hint[0])
    fprintf(stderr, "pitstop: hint: %s\n", e->hint);
  return 1;
}

int pit_cli_usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vline("pitstop: ", fmt, ap);
  va_end(ap);
  return 2;
}

int pit_cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vline("pitstop: ", fmt, ap);
  va_end(ap);
  return 1;
}

void pit_cli_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vline("pitstop: warning: ", fmt, ap);
  va_end(ap);
}

void pit_cli_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vline("pitstop: ", fmt, ap);
  va_end(ap);
}

int pit_cli_bad_option(const char *cmd, char **argv) {
  return pit_cli_usage("%s: unknown option or missing value: '%s' (see 'pitstop %s --help')", cmd, argv[optind - 1],
                       cmd);
}

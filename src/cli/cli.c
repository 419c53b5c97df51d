/* cli.c — the command's messages on stderr: errors, usage errors, warnings and
 * notes, each one line prefixed "pitstop: " (warnings "pitstop: warning: ").
 * Invariant: the subcommands write to stderr only through these. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/catalog.h"

static void vline(const char *prefix, const char *fmt, va_list ap) {
  fputs(prefix, stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

/* The body of every printf-style message function below: one line of fmt's
 * arguments after prefix. */
#define LINE(prefix)                                                                                              \
  do {                                                                                                            \
    va_list ap;                                                                                                   \
    va_start(ap, fmt);                                                                                            \
    vline(prefix, fmt, ap);                                                                                       \
    va_end(ap);                                                                                                   \
  } while (0)

int pit_cli_fail(const struct pit_err *e) {
  fprintf(stderr, "pitstop: %s\n", e->msg[0] ? e->msg : "unknown error");
  if (e->hint[0])
    fprintf(stderr, "pitstop: hint: %s\n", e->hint);
  return 1;
}

int pit_cli_usage(const char *fmt, ...) {
  LINE("pitstop: ");
  return 2;
}

int pit_cli_error(const char *fmt, ...) {
  LINE("pitstop: ");
  return 1;
}

void pit_cli_warn(const char *fmt, ...) { LINE("pitstop: warning: "); }

void pit_cli_note(const char *fmt, ...) { LINE("pitstop: "); }

int pit_cli_bad_option(const char *cmd, char **argv) {
  return pit_cli_usage("%s: unknown option or missing value: '%s' (see 'pitstop %s --help')", cmd, argv[optind - 1],
                       cmd);
}

const struct pit_cli_opt *pit_cli_opt_find(const struct pit_cli_opt *t, int n, const char *name, size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(t[i].name) == len && strncmp(t[i].name, name, len) == 0)
      return &t[i];
  return NULL;
}

void pit_cli_opts_print(FILE *f, const struct pit_cli_opt *t, int n, int width) {
  for (int i = 0; i < n; i++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", t[i].name, t[i].arg ? " " : "", t[i].arg ? t[i].arg : "");
    const char *h = t[i].help;
    int len = (int)strcspn(h, "\n");
    fprintf(f, "  %-*s %.*s\n", width, left, len, h);
    while (h[len]) { /* further lines, under the first */
      h += len + 1;
      len = (int)strcspn(h, "\n");
      fprintf(f, "  %-*s %.*s\n", width, "", len, h);
    }
  }
}

static const struct pit_cli_opt help_opt = {"help", 0, 'h', NULL, "this text"};

void pit_cli_help(FILE *f, const struct pit_cli_cmd *c) {
  int width = 6; /* "--help" */
  for (int i = 0; i < c->nopts; i++) {
    const struct pit_cli_opt *o = &c->opts[i];
    int w = 2 + (int)strlen(o->name) + (o->arg ? 1 + (int)strlen(o->arg) : 0);
    if (w > width)
      width = w;
  }
  fputs(c->usage, f);
  pit_cli_opts_print(f, c->opts, c->nopts, width + 1);
  pit_cli_opts_print(f, &help_opt, 1, width + 1);
  if (c->epilog)
    fputs(c->epilog, f);
}

void pit_cli_getopt_init(struct pit_cli_getopt *g, int argc, char **argv, const struct pit_cli_cmd *c) {
  memset(g, 0, sizeof *g);
  g->argc = argc;
  g->argv = argv;
  g->t = c->opts;
  int n = g->n = c->nopts < PIT_CLI_MAX_OPTS ? c->nopts : PIT_CLI_MAX_OPTS;
  for (int i = 0; i < n; i++) /* lo[i] is t[i] */
    g->lo[i] = (struct option){c->opts[i].name, c->opts[i].has_arg ? required_argument : no_argument, NULL,
                               c->opts[i].val};
  g->lo[n] = (struct option){help_opt.name, no_argument, NULL, help_opt.val};
  optind = 1;
  opterr = 0;
}

int pit_cli_getopt_next(struct pit_cli_getopt *g) {
  int k = -1;
  int c = getopt_long(g->argc, g->argv, "", g->lo, &k);
  g->opt = c == -1 || c == '?' || k < 0 ? NULL : k < g->n ? &g->t[k] : &help_opt;
  return c;
}

const char *pit_cli_self_exe(void) {
  static char path[4096];
  ssize_t k = readlink("/proc/self/exe", path, sizeof path - 1);
  if (k <= 0)
    return NULL;
  path[k] = 0;
  return path;
}

const char *pit_cli_catalog(const char *name, struct pit_err *e) {
  static char found[4300];
  if (pit_catalog_default_path(pit_cli_self_exe(), name, found, sizeof found, e) < 0)
    return NULL;
  return found;
}

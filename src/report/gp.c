/* gp.c — a gnuplot chart in the making (gp_impl.h): its private temporary
 * directory, data files and script, drawn by the one gnuplot driver
 * (pit_gnuplot_draw) and copied to its name atomically; used by plot.c's
 * charts and timeline.c's timeline; and the charts' options (pit_plot_opts).
 * Invariants: every text taken from the runs or from the user reaches the
 * script only as a single-quoted gnuplot string, in which gnuplot
 * substitutes nothing; the output is complete or absent; the temporary
 * directory is removed by pit__gp_cleanup. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "report/gp_impl.h"

/* ---- a chart's options (report.h) ---- */

void pit_plot_opts_init(struct pit_plot_opts *o) {
  memset(o, 0, sizeof *o);
  o->kind = PIT_PLOT_STEPS;
  o->metric = PIT_METRIC_TP;
}

int pit_plot_kind_parse(const char *s, enum pit_plot_kind *k) {
  static const char *const names[] = {"steps", "batch", "scaling", "cost"};
  int i = pit_parse_name(s, names, 4);
  if (i < 0)
    return PIT_EARG;
  *k = (enum pit_plot_kind)i;
  return 0;
}

int pit_plot_metric_parse(const char *s, enum pit_plot_metric *m) {
  static const char *const names[] = {"tp", "sample", "total"};
  int i = pit_parse_name(s, names, 3);
  if (i < 0)
    return PIT_EARG;
  *m = (enum pit_plot_metric)i;
  return 0;
}

/* ---- the chart in the making ---- */

/* Writes s as a parenthesised gnuplot string expression: single-quoted parts
 * (quotes doubled; no substitution happens inside them) joined by "\n" where
 * s has a newline; other control characters become spaces. */
void pit__gp_str(FILE *f, const char *s) {
  fputs("('", f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\n')
      fputs("' . \"\\n\" . '", f);
    else if (*p == '\'')
      fputs("''", f);
    else if (*p < 0x20 || *p == 0x7f)
      fputc(' ', f);
    else
      fputc(*p, f);
  }
  fputs("')", f);
}

/* ---- the temporary directory and the gnuplot run ---- */

FILE *pit__gp_data(struct gp *g, int idx, struct pit_err *e) {
  char path[600];
  snprintf(path, sizeof path, "%s/d%d.dat", g->dir, idx);
  FILE *f = fopen(path, "w");
  if (!f)
    pit_err_errno(e, PIT_EIO, "cannot create '%s'", path);
  return f;
}

/* Writes the quoted path of data file idx into the script. */
void pit__gp_dataref(struct gp *g, int idx) {
  char path[600];
  snprintf(path, sizeof path, "%s/d%d.dat", g->dir, idx);
  pit__gp_str(g->f, path);
}

int pit__gp_close_data(FILE *d, struct gp *g, struct pit_err *e) {
  if (fflush(d) != 0 || ferror(d)) {
    fclose(d);
    return pit_err_errno(e, PIT_EIO, "cannot write data in '%s'", g->dir);
  }
  fclose(d);
  return 0;
}

void pit__gp_cleanup(struct gp *g) {
  if (g->f)
    fclose(g->f);
  g->f = NULL;
  if (!g->dir[0])
    return;
  DIR *d = opendir(g->dir);
  if (d) {
    struct dirent *de;
    char path[1024];
    while ((de = readdir(d)) != NULL) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
        continue;
      snprintf(path, sizeof path, "%s/%s", g->dir, de->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(g->dir);
  g->dir[0] = '\0';
}

int pit__gp_open(struct gp *g, const struct pit_plot_opts *o, int svg, const char *title, struct pit_err *e) {
  memset(g, 0, sizeof *g);
  g->svg = svg;
  const char *tmp = getenv("TMPDIR");
  snprintf(g->dir, sizeof g->dir, "%s/pitstop-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g->dir)) {
    int rc = pit_err_errno(e, PIT_EIO, "cannot create a temporary directory '%s'", g->dir);
    g->dir[0] = '\0';
    return rc;
  }
  snprintf(g->script, sizeof g->script, "%s/plot.gp", g->dir);
  snprintf(g->out, sizeof g->out, "%s/out.%s", g->dir, g->svg ? "svg" : "png");
  g->f = fopen(g->script, "w");
  if (!g->f)
    return pit_err_errno(e, PIT_EIO, "cannot create '%s'", g->script);
  int w = o->width > 0 ? o->width : 1000, h = o->height > 0 ? o->height : 600;
  if (g->svg)
    fprintf(g->f, "set terminal svg size %d,%d noenhanced font 'Sans,12' background '#ffffff'\n", w, h);
  else
    fprintf(g->f, "set terminal pngcairo size %d,%d noenhanced font 'Sans,11' background '#ffffff'\n", w, h);
  fputs("set output ", g->f);
  pit__gp_str(g->f, g->out);
  fputs("\nset encoding utf8\nset grid lc rgb '#d8d8d8'\nset border lc rgb '#404040'\n", g->f);
  /* distinguishable colours on white (Tableau 10), cycled for more lines */
  static const char *colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  for (int i = 0; i < 10; i++)
    fprintf(g->f, "set linetype %d lc rgb '%s' lw 2 pt 7\n", i + 1, colours[i]);
  fputs("set linetype cycle 10\n", g->f);
  g->title = o->title ? o->title : title;
  g->own_title = !o->title;
  snprintf(g->title_now, sizeof g->title_now, "%s", g->title);
  fputs("set title ", g->f);
  pit__gp_str(g->f, g->title);
  fputs(" font ',13'\n", g->f);
  return 0;
}

/* Runs gnuplot on the script and copies its picture to o->out atomically. */
int pit__gp_run(struct gp *g, const struct pit_plot_opts *o, struct pit_err *e) {
  if (fflush(g->f) != 0 || ferror(g->f))
    return pit_err_errno(e, PIT_EIO, "cannot write '%s'", g->script);
  fclose(g->f);
  g->f = NULL;
  return pit_gnuplot_draw(o->gnuplot, g->script, g->out, o->out, e);
}

int pit__gp_out_format(const struct pit_plot_opts *o, int *svg, struct pit_err *e) {
  if (!o->out || !*o->out)
    return pit_err_set(e, PIT_EARG, "no output file given");
  size_t n = strlen(o->out);
  if (n > 4 && strcasecmp(o->out + n - 4, ".svg") == 0)
    *svg = 1;
  else if (n > 4 && strcasecmp(o->out + n - 4, ".png") == 0)
    *svg = 0;
  else
    return pit_err_set(e, PIT_EARG, "'%s': the output must end in .png or .svg", o->out);
  return 0;
}

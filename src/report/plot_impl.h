/* plot_impl.h — private to pitstop plot's charts (src/report/plot*.c): the
 * chart in the making (its temporary directory and gnuplot script) and the
 * gnuplot layer plot.c gives the others. */
#ifndef PIT_PLOT_IMPL_H
#define PIT_PLOT_IMPL_H

#include <stdio.h>

#include "pitstop/report.h"

#define MAX_SERIES 64   /* lines (configurations, epochs) per chart */

/* A chart in the making: its private directory and gnuplot script. */
struct gp {
  char dir[512];
  char script[600], out[600];
  FILE *f;          /* the script */
  int svg;
  const char *title;
  int own_title;    /* the title is pitstop's (not --title): details may be added */
  char title_now[800]; /* the title as last set in the script */
};

/* Writes s as a parenthesised gnuplot string expression (single-quoted parts: nothing substituted). */
void pit__gp_str(FILE *f, const char *s);
/* A readable unit for values up to vmax seconds: factor and name. */
double pit__time_unit(double vmax, const char **name);
/* Opens data file idx of the chart for writing (NULL and e set if it cannot). */
FILE *pit__gp_data(struct gp *g, int idx, struct pit_err *e);
/* Writes the quoted path of data file idx into the script. */
void pit__gp_dataref(struct gp *g, int idx);
/* Closes a data file: 0, or an error naming the directory. */
int pit__gp_close_data(FILE *d, struct gp *g, struct pit_err *e);
/* Closes the script and removes the temporary directory. */
void pit__gp_cleanup(struct gp *g);
/* Opens a chart: its temporary directory and script, terminal and title set. */
int pit__gp_open(struct gp *g, const struct pit_plot_opts *o, int svg, const char *title, struct pit_err *e);
/* Runs gnuplot on the script and copies the picture to o->out atomically. */
int pit__gp_run(struct gp *g, const struct pit_plot_opts *o, struct pit_err *e);
/* *svg from o->out's extension (.svg or .png). */
int pit__out_format(const struct pit_plot_opts *o, int *svg, struct pit_err *e);
/* The steps chart (plot_steps.c): one run, step time per iteration, one line per epoch. */
int pit__plot_steps(struct gp *g, const struct pit_runset *rs, struct pit_err *e);

#endif

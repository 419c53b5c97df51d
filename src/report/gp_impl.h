/* gp_impl.h — the report module's private gnuplot chart in the making
 * (gp.c), shared by plot.c's charts and timeline.c's timeline: a private
 * temporary directory with the data files and the script, run through the
 * one gnuplot driver (util/gnuplot.c, pit_gnuplot_draw).
 * Invariants: every text from runs or users reaches the script only as a
 * single-quoted gnuplot string (pit__gp_str); the output is complete or
 * absent; pit__gp_cleanup removes the directory. */
#ifndef PIT_REPORT_GP_IMPL_H
#define PIT_REPORT_GP_IMPL_H

#include <stdio.h>

#include "pitstop/report.h"

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

/* Writes s as a parenthesised gnuplot string expression: single-quoted parts
 * (quotes doubled; no substitution happens inside them) joined by "\n" where
 * s has a newline; other control characters become spaces. */
void pit__gp_str(FILE *f, const char *s);
/* Data file idx of the chart, created for writing. */
FILE *pit__gp_data(struct gp *g, int idx, struct pit_err *e);
/* Writes the quoted path of data file idx into the script. */
void pit__gp_dataref(struct gp *g, int idx);
/* Closes a data file; an error if it was not all written. */
int pit__gp_close_data(FILE *d, struct gp *g, struct pit_err *e);
/* Closes the script and removes the directory. */
void pit__gp_cleanup(struct gp *g);
/* The directory and the script's head (terminal, output, colours, title: o->title or title). */
int pit__gp_open(struct gp *g, const struct pit_plot_opts *o, int svg, const char *title, struct pit_err *e);
/* Runs gnuplot on the script and copies its picture to o->out atomically. */
int pit__gp_run(struct gp *g, const struct pit_plot_opts *o, struct pit_err *e);
/* *svg from o->out's extension (.png or .svg; anything else is an error). */
int pit__gp_out_format(const struct pit_plot_opts *o, int *svg, struct pit_err *e);

#endif

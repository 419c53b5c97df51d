/* chart.c — a simulated case at a glance: work done over time for each
 * result against the deadline and the straight line to it, and under the
 * axis one band per result shaded by what it held (spot, on-demand, idle).
 * gnuplot draws it (pit_gnuplot_draw, the one driver) from data files in a
 * private temporary directory, the picture there too; it is copied to out
 * atomically, so out is whole or untouched. Paths reach gnuplot
 * single-quoted (a quote doubled).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pitstop/sim.h"

static void gp_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

static void rm_dir(const char *dir, int nfiles) {
  char p[700];
  for (int i = 0; i < nfiles; i++) {
    snprintf(p, sizeof p, "%s/d%d.dat", dir, i);
    unlink(p);
  }
  snprintf(p, sizeof p, "%s/chart.gp", dir);
  unlink(p);
  snprintf(p, sizeof p, "%s/picture", dir);
  unlink(p);
  rmdir(dir);
}


/* the picture's name and a private directory for the data: one message naming out on error */
static int chart_start(const char *out, int *svg, char *tmpout, size_t tn, char *dir, size_t dn, struct pit_err *e) {
  size_t ol = strlen(out);
  *svg = ol > 4 && strcmp(out + ol - 4, ".svg") == 0;
  if (!*svg && !(ol > 4 && strcmp(out + ol - 4, ".png") == 0))
    return pit_err_set(e, PIT_EARG, "chart '%s': the name must end in .png or .svg", out);
  snprintf(tmpout, tn, "%s.tmp.%ld", out, (long)getpid()); /* out's directory writable: said now, naming out */
  FILE *probe = fopen(tmpout, "w");
  if (!probe)
    return pit_err_errno(e, PIT_EIO, "cannot write chart '%s'", out);
  fclose(probe);
  unlink(tmpout);
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, dn, "%s/pitstop-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return pit_err_errno(e, PIT_EIO, "cannot create a temporary directory '%s'", dir);
  snprintf(tmpout, tn, "%s/picture", dir);
  return 0;
}

/* DIR/d<i>.dat for i < n: row(d, ctx, i) writes result i's rows. */
static int write_data(const char *dir, int n, void (*row)(FILE *, const void *, int), const void *ctx,
                      struct pit_err *e) {
  char path[700];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/d%d.dat", dir, i);
    FILE *d = fopen(path, "w");
    if (!d)
      return pit_err_errno(e, PIT_EIO, "cannot create '%s'", path);
    row(d, ctx, i);
    if (fclose(d) != 0)
      return pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
  }
  return 0;
}

/* DIR/chart.gp opened into *f (path: its name), its terminal (height pixels high) and output set. */
static int open_script(const char *dir, int svg, int height, const char *tmpout, char *path, size_t pn, FILE **f,
                       struct pit_err *e) {
  snprintf(path, pn, "%s/chart.gp", dir);
  if (!(*f = fopen(path, "w")))
    return pit_err_errno(e, PIT_EIO, "cannot create '%s'", path);
  fprintf(*f, "set terminal %s size 1100,%d noenhanced background '#ffffff'\n", svg ? "svg" : "pngcairo", height);
  fputs("set output ", *f);
  gp_quote(*f, tmpout);
  return 0;
}

/* The script closed (rc so far), drawn, the data removed; out whole or untouched. */
static int finish(int rc, FILE *f, const char *path, const char *dir, int n, const char *tmpout, const char *out,
                  struct pit_err *e) {
  if (f && fclose(f) != 0 && !rc)
    rc = pit_err_errno(e, PIT_EIO, "cannot write '%s'", path);
  if (!rc)
    rc = pit_gnuplot_draw(NULL, path, tmpout, out, e);
  rm_dir(dir, n);
  return rc;
}

/* what a data file's rows are written from: the results (pit_sim_result or pit_fleet_result) and the tick */
struct rows {
  const void *res;
  double tick_h;
};

/* x done mode: one line per change of mode or every few ticks */
static void sim_row(FILE *d, const void *ctx, int i) {
  const struct rows *c = ctx;
  const struct pit_sim_result *r = (const struct pit_sim_result *)c->res + i;
  int step = r->nticks > 4000 ? r->nticks / 2000 : 1;
  fprintf(d, "0 0 0\n");
  for (int t = 0; t < r->nticks && r->done_at; t++)
    if (t % step == 0 || t == r->nticks - 1 || (t > 0 && r->mode_at[t] != r->mode_at[t - 1]))
      fprintf(d, "%.5f %.5f %d\n", (t + 1) * c->tick_h, r->done_at[t], r->mode_at[t]);
}

/* x done spot od pool (-1: none held), every few ticks */
static void fleet_row(FILE *d, const void *ctx, int i) {
  const struct rows *c = ctx;
  const struct pit_fleet_result *r = (const struct pit_fleet_result *)c->res + i;
  int step = r->nticks > 4000 ? r->nticks / 2000 : 1;
  fprintf(d, "0 0 0 0 0\n");
  for (int t = 0; t < r->nticks; t++)
    if (t % step == 0 || t == r->nticks - 1)
      fprintf(d, "%.5f %.5f %d %d %d\n", (t + 1) * c->tick_h, r->done_at[t], r->member_at[t].spot,
              r->member_at[t].od, r->member_at[t].spot + r->member_at[t].od ? r->member_at[t].pool : -1);
}

int pit_sim_chart(const struct pit_sim_case *c, const struct pit_sim_result *res, const char *const *names, int n,
                  const char *out, struct pit_err *e) {
  struct pit_sim_grid g;
  int rc = pit_sim_grid(c, &g, e);
  if (rc)
    return rc;
  char tmpout[1100], dir[512], path[700];
  int svg;
  if ((rc = chart_start(out, &svg, tmpout, sizeof tmpout, dir, sizeof dir, e)))
    return rc;
  double job = g.work * g.tick_h, dl = g.deadline * g.tick_h, band = job / 14;
  struct rows rows = {res, g.tick_h};
  FILE *f = NULL;
  rc = write_data(dir, n, sim_row, &rows, e);
  if (!rc)
    rc = open_script(dir, svg, 650, tmpout, path, sizeof path, &f, e);
  if (f) {
    fprintf(f, "\nset title 'work done: job %g h, deadline %g h, restart %g h (bands: green spot, red on-demand)'\n",
            job, dl, g.restart * g.tick_h);
    fprintf(f, "set xlabel 'hours since submission'\nset ylabel 'work done (h)'\nset key left top\n"
               "set grid\nset xrange [0:%g]\nset yrange [%g:%g]\nset ytics 0, %g\n",
            dl * 1.05, -band * n - band * 0.2, job * 1.08, job / 4);
    fprintf(f, "set arrow from %g,%g to %g,%g nohead dt 2 lc rgb '#000000'\n", dl, -band * n, dl, job * 1.08);
    for (int i = 0; i < n; i++)
      fprintf(f, "set label %d '%s' at %g,%g right font ',8'\n", i + 1, names[i], -dl * 0.005,
              -band * (i + 0.5));
    fputs("set style fill solid 0.8 noborder\nplot ", f);
    fprintf(f, "[0:%g] x*%g/%g title 'straight line to the deadline' dt 3 lc rgb '#888888', ", dl, job, dl);
    for (int i = 0; i < n; i++) {
      snprintf(path, sizeof path, "%s/d%d.dat", dir, i);
      gp_quote(f, path);
      fprintf(f, " using 1:2 with steps lw 2 title '%s', ", names[i]);
      gp_quote(f, path);
      /* band: a box from the previous point to this one, coloured by mode */
      fprintf(f,
              " using ($1-%g/2):(%g):(%g/2):(%g):($3==1?0x2ca02c:$3==2?0xd62728:0xf0f0f0) "
              "with boxxyerror lc rgb variable notitle%s",
              dl / 2000 > g.tick_h ? dl / 2000 : g.tick_h, -band * (i + 0.5),
              dl / 2000 > g.tick_h ? dl / 2000 : g.tick_h, band * 0.4, i < n - 1 ? ", " : "\n");
    }
    snprintf(path, sizeof path, "%s/chart.gp", dir);
  }
  return finish(rc, f, path, dir, n, tmpout, out, e);
}

/* A fleet: work done of each result against the deadline (top), and the first
 * result's nodes over time by market, with the pool it ran in (bottom). */
int pit_fleet_chart(const struct pit_sim_study *s, const struct pit_fleet_result *res, const char *const *names, int n,
                    const char *out, struct pit_err *e) {
  int rc = pit_fleet_check(s, e);
  if (rc)
    return rc;
  for (int i = 0; i < n; i++)
    if (!res[i].done_at || !res[i].member_at)
      return pit_err_set(e, PIT_EARG, "chart '%s': result %d has no path (keep_path)", out, i);
  char tmpout[1100], dir[512], path[700];
  int svg;
  if ((rc = chart_start(out, &svg, tmpout, sizeof tmpout, dir, sizeof dir, e)))
    return rc;
  double job = s->job_h, dl = s->deadline_h;
  struct rows rows = {res, s->pools[0].trace->gap_s / 3600};
  FILE *f = NULL;
  rc = write_data(dir, n, fleet_row, &rows, e);
  if (!rc)
    rc = open_script(dir, svg, 800, tmpout, path, sizeof path, &f, e);
  if (f) {
    char d0[700];
    snprintf(d0, sizeof d0, "%s/d0.dat", dir);
    fprintf(f, "\nset multiplot layout 2,1\nset grid\nset key left top\nset xrange [0:%g]\n", dl * 1.05);
    fprintf(f, "set title 'work done: job %g h on %d nodes, deadline %g h, restart %g h, %d zone(s)'\n", job,
            s->nodes, dl, s->restart_h, s->npools);
    fprintf(f, "set ylabel 'work done (h)'\nset yrange [0:%g]\n", job * 1.08);
    fprintf(f, "set arrow 1 from %g,0 to %g,%g nohead dt 2 lc rgb '#000000'\nplot ", dl, dl, job * 1.08);
    for (int i = 0; i < n; i++) {
      snprintf(path, sizeof path, "%s/d%d.dat", dir, i);
      gp_quote(f, path);
      fprintf(f, " using 1:2 with steps lw 2 title '%s'%s", names[i], i < n - 1 ? ", " : "\n");
    }
    fprintf(f, "unset arrow 1\nset title '%s: nodes by market (left axis) and the zone held (right axis)'\nset rmargin 14\n",
            names[0]);
    fprintf(f, "set xlabel 'hours since submission'\nset ylabel 'nodes'\nset yrange [0:%g]\n"
               "set y2label 'zone held'\nset y2range [-1.5:%d]\nset y2tics (",
            s->nmax * 1.15 + 0.5, s->npools);
    for (int p = 0; p < s->npools; p++) /* the zones by name on the right axis */
      fprintf(f, "%s'%s' %d", p ? ", " : "", s->pools[p].zone, p);
    fputs(") font ',8'\n", f);
    fputs("set style fill solid 0.5 noborder\nplot ", f);
    gp_quote(f, d0);
    fputs(" using 1:($3+$4) with fillsteps lc rgb '#d62728' title 'on-demand', ", f);
    gp_quote(f, d0);
    fputs(" using 1:3 with fillsteps lc rgb '#2ca02c' title 'spot', ", f);
    gp_quote(f, d0);
    fputs(" using 1:5 axes x1y2 with steps lw 2 dt 2 lc rgb '#1f77b4' title 'zone held'\nunset multiplot\n", f);
    snprintf(path, sizeof path, "%s/chart.gp", dir);
  }
  return finish(rc, f, path, dir, n, tmpout, out, e);
}

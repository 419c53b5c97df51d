#!/usr/bin/env bash
# one_reader.sh — one reader of an elastic run's events file (issue 27): the run log's fold
# (src/record/runlog.c, pit_runlog_load) is the only code that reads a `pitstop run` events file
# record by record. Outside src/record/ (the readers themselves and the fold) and
# src/store/runset.c (the one loader of runs for summary, plot and predict, which reads any
# records file), no file calls a record reader (pit_record_each, pit_record_reader_open/next,
# pit_follower_open on a path), and in src/control, src/policy, src/provider and src/report
# nothing hands a run's events file to the run loader (pit_runset_load_events(... events ...)):
# pitstop status's predictor series come from the fold's own reading (pit_runlog_load_each), so no
# exception is left. The test also checks that it catches planted offenders, so it cannot pass by
# matching nothing.
set -u
SRC=${PIT_SOURCE_DIR:?}
readers='pit_record_each\(|pit_record_reader_(open|next)\(|pit_follower_open\('
scan() { # DIR...: the record readers outside the allowed places
  grep -rnHE --include='*.c' "$readers" "$@" | grep -vE '^([^:]*/)?src/record/|^([^:]*/)?src/store/runset\.c:'
}
scan_runset() { # DIR...: an elastic run's events file through the run loader
  grep -rnHE --include='*.c' 'pit_runset_load_events\([^;]*events' "$@"
}
found=$(cd "$SRC" && { scan src; scan_runset src/control src/policy src/provider src/report; })
if [ -n "$found" ]; then
  echo "FAIL: an events-file reader outside src/record/runlog.c (read the fold: pit_runlog_load):"
  echo "$found"
  exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/pit-onereader-XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/control" "$T/src/record" "$T/src/store"
printf '%s\n' 'int f(const char *events) {' '  return pit_record_each(events, live_record, &st, e);' \
  '  if (pit_record_reader_open(&rd, c->events_path, &e2) < 0)' '  while (pit_record_reader_next(&rd, &r, e) == 1)' \
  '  pit_follower_open(&f, path, 0, e);' '  pit_runset_load_events(&rs, s->events, NULL, 0, &e);' '}' > "$T/src/control/bad.c"
printf '%s\n' 'int g(void) {' '  pit_follower_open_fd(&f, fd, 1, name, 1, e);' '  pit_runlog_load(&log, events, e);' \
  '  pit_runlog_load_each(&log, events, series_add, &rs, e);' '}' > "$T/src/control/ok.c"
printf '%s\n' 'int h(void) { return pit_follower_open(&f, path, 0, e); }' > "$T/src/record/runlog.c"
printf '%s\n' 'int k(void) { return pit_record_reader_open(&rd, path, e); }' > "$T/src/store/runset.c"
got=$(cd "$T" && { scan src; scan_runset src/control; })
[ "$(printf '%s\n' "$got" | grep -c bad.c)" = 5 ] || { echo "FAIL: planted offenders not all found: $got"; exit 1; }
[ -z "$(printf '%s\n' "$got" | grep -v bad.c)" ] || { echo "FAIL: allowed readers flagged: $got"; exit 1; }
echo "ok: the run log's fold is the only reader of an elastic run's events file"

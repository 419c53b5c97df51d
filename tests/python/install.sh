#!/usr/bin/env bash
# ctest: slow
# install.sh — `pip install ./python` offline (--no-build-isolation --no-index: Debian's setuptools
# builds it, nothing is downloaded) into a target directory, from a copy of python/ (pip builds in
# the source tree): the installed module is the source's pitstop.py and imports from there alone.
# Skipped (77) without pip or setuptools for /usr/bin/python3 (scripts/setup installs them).
. "$PIT_SOURCE_DIR/tests/python/common.bash"
"$PY" -m pip --version > /dev/null 2>&1 && "$PY" -c 'import setuptools' 2> /dev/null || {
  echo "skipped: python3-pip / python3-setuptools are not installed"
  exit 77
}
cp -r "$PIT_SOURCE_DIR/python" "$T/src"
# --target: PEP 668 leaves a target directory alone (Debian refuses the system's site-packages)
PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$PY" -m pip install --no-build-isolation --no-index \
  --target "$T/site" "$T/src" > "$T/pip.log" 2>&1 || fail "pip install failed: $(tail -n 20 "$T/pip.log")"
cmp "$T/site/pitstop.py" "$PIT_SOURCE_DIR/python/pitstop.py" || fail "the installed pitstop.py is not the source's"
ls -d "$T"/site/pitstop-*.dist-info > /dev/null || fail "no pitstop-*.dist-info installed"
(cd "$T" && PYTHONPATH="$T/site" "$PY" -c '
import os, sys, pitstop
assert pitstop.__file__ == os.path.join(sys.argv[1], "pitstop.py"), pitstop.__file__
assert callable(pitstop.Job) and pitstop.samples_digest([0]) == "e220a8397b1dcdaf"
print("installed:", pitstop.__file__)' "$T/site") || fail "the installed module does not import"

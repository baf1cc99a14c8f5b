#!/usr/bin/env bash
# examples/hogwild: 2 processes training one shared model lock-free reach
# the accuracy of one process (within 1 point) on the same 2 epochs of data.
# (After one epoch the racy run's spread came close to the limit: once 1.07
# points; after two, the measured differences were 0.3-0.5.)
#   hogwild_test.sh HOGWILD
set -uo pipefail
program="$1"
accuracy() { sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p'; }
one="$("$program" --processes 1 --threads 1 --epochs 2 | tee /dev/stderr | accuracy)"
two="$("$program" --processes 2 --threads 1 --epochs 2 | tee /dev/stderr | accuracy)"
[ -n "$one" ] && [ -n "$two" ] || { echo "FAIL: no accuracy printed"; exit 1; }
awk -v a="$one" -v b="$two" 'BEGIN {
  d = a - b; if (d < 0) d = -d
  printf "1 process %.2f%%, 2 processes %.2f%%, difference %.2f points\n", a, b, d
  if (d > 1.0 || a < 70 || b < 70) { print "FAIL"; exit 1 }
  print "ok" }'

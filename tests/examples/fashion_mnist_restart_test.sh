#!/usr/bin/env bash
# The data-parallel main job under `brasarun --max-restarts 1`: rank 1 is
# SIGKILLed in the middle of epoch 2; the job must restart, resume from the
# epoch-1 checkpoint and finish, with each epoch in the metrics (and in the
# chart) exactly once.
#   fashion_mnist_restart_test.sh BRASARUN FASHION_MNIST
set -uo pipefail
brasarun="$1"
program="$2"
dir="$(mktemp -d)"
launcher=""
cleanup() {
  [ -n "$launcher" ] && kill "$launcher" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "---- job output ----"
  cat "$dir/log"
  exit 1
}

"$brasarun" --nproc-per-node 2 --max-restarts 1 "$program" --model mlp --epochs 3 \
  --train-samples 30000 --checkpoint "$dir/checkpoint.safetensors" \
  --metrics "$dir/metrics.csv" >"$dir/log" 2>&1 &
launcher=$!

# The checkpoint appears (atomically) at the end of epoch 1; then a moment
# into epoch 2.
for _ in $(seq 900); do
  [ -f "$dir/checkpoint.safetensors" ] && break
  sleep 0.1
done
[ -f "$dir/checkpoint.safetensors" ] || fail "no checkpoint after 90 s"
sleep 0.3
victim=""
for pid in $(pgrep -f "$program"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'RANK=1'; then victim="$pid"; fi
done
[ -n "$victim" ] || fail "rank 1 not found"
kill -9 "$victim"
echo "killed rank 1 (pid $victim) during epoch 2"

wait "$launcher"
rc=$?
launcher=""
[ "$rc" -eq 0 ] || fail "the job exited with $rc"
grep -q "restart 1: resumed from .* after epoch 1" "$dir/log" || fail "no resume after the restart"
grep -q "epoch 3: train loss" "$dir/log" || fail "epoch 3 did not finish"
epochs="$(tail -n +2 "$dir/metrics.csv" | cut -d, -f1 | tr '\n' ' ')"
[ "$epochs" = "1 2 3 " ] || fail "metrics hold epochs '$epochs', expected '1 2 3 '"
# Rank 0 alone redraws the chart after every epoch, across the restart.
[ -f "$dir/metrics.svg" ] || fail "no chart beside the metrics"
[ "$(grep -c "<circle" "$dir/metrics.svg")" -eq 9 ] || fail "the chart does not hold 3 epochs"
[ "$(grep -c "^\[rank 0\] chart: $dir/metrics.svg" "$dir/log")" -eq 1 ] || fail "rank 0 named no chart"
! grep -q "^\[rank 1\] chart:" "$dir/log" || fail "rank 1 wrote a chart"
grep "resumed\|final test accuracy" "$dir/log"
echo "ok"

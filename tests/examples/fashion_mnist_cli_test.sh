#!/usr/bin/env bash
# The main job's command line as a user types it: each mistake gets a clear
# message naming the option and the right exit status (0 for --help, 2 for a
# bad command line, 1 for a runtime error), before any training; --resume
# says when a run is complete and applies what it is told; the CNN's and the
# MLP's files stay apart; every epoch redraws an SVG chart.
#   fashion_mnist_cli_test.sh FASHION_MNIST HOGWILD SOURCE_DIR
set -uo pipefail
program="$1"
hogwild="$2"
source_dir="$3"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  echo "---- stdout ----"; cat "$dir/out"
  echo "---- stderr ----"; cat "$dir/err"
  failures=$((failures + 1))
}
# run EXPECTED_STATUS ARGS...: runs the program (in $dir) and checks its status.
run() {
  local expected="$1"
  shift
  (cd "$dir" && "$program" "$@") >"$dir/out" 2>"$dir/err"
  local status=$?
  [ "$status" -eq "$expected" ] || fail "'$*' exited with $status, expected $expected"
}
has() { grep -qF -- "$2" "$dir/$1" || fail "$1 lacks '$2'"; }
lacks() { ! grep -qF -- "$2" "$dir/$1" || fail "$1 has '$2'"; }
small=(--model mlp --train-samples 2000 --run-dir "$dir")

# --help: stdout, exit 0.
run 0 --help
has out "usage: fashion_mnist"
has out "--resume"
[ -s "$dir/err" ] && fail "--help wrote to stderr"

# Numbers are parsed whole and range-checked; the message names the option.
run 2 --epochs 2x
has err "--epochs expects a whole number from 1 to 100000, got '2x'"
run 2 --epochs 99999999999999999999
has err "--epochs is out of range"
run 2 --batch-size 0
has err "--batch-size is out of range"
run 2 --lr nan
has err "--lr expects a number"
run 2 --lr -0.1
has err "--lr is out of range"
run 2 --threads 1.5
has err "--threads expects a whole number"
run 2 --model resnet
has err "--model must be one of cnn, mlp, got 'resnet'"
run 2 --device tpu
has err "--device must be one of cpu, cuda, got 'tpu'"
run 2 --epochs
has err "--epochs needs a value"
run 2 --epoch 3
has err "unknown option '--epoch'"
run 2 --resume=yes
has err "--resume takes no value"

# Unwritable files are refused before training starts.
run 2 "${small[@]}" --metrics "$dir/missing/metrics.csv"
has err "--metrics $dir/missing/metrics.csv: cannot write in its directory"
lacks out "epoch 1:"
run 2 "${small[@]}" --checkpoint "$dir/missing/model.safetensors"
has err "--checkpoint $dir/missing/model.safetensors: cannot write in its directory"
lacks out "epoch 1:"

# A missing --run-dir is made; one that cannot be is refused.
run 0 --model mlp --train-samples 500 --epochs 1 --run-dir "$dir/new/runs"
[ -f "$dir/new/runs/fashion_mnist_mlp.safetensors" ] || fail "no checkpoint in the new --run-dir"
touch "$dir/a_file"
run 2 "${small[@]}" --run-dir "$dir/a_file/runs"
has err "--run-dir $dir/a_file/runs: cannot make the directory (Not a directory)"
lacks out "epoch 1:"

mkdir "$dir/a_directory"
run 2 "${small[@]}" --metrics "$dir/a_directory"
has err "--metrics $dir/a_directory: is a directory, expected a file"
lacks out "epoch 1:"

# --resume without a checkpoint.
run 2 "${small[@]}" --resume
has err "--resume: there is no checkpoint $dir/fashion_mnist_mlp.safetensors"

# A runtime error shows the message, not the failed check or a source path.
run 1 "${small[@]}" --data "$dir/nowhere"
has err "MNIST: neither '$dir/nowhere/train-images-idx3-ubyte'"
lacks err "check failed"
lacks err "$source_dir"
lacks err " at core/"
has err "(--verbose shows where it failed)"
run 1 "${small[@]}" --data "$dir/nowhere" --verbose
has err " at core/"
lacks err "$source_dir"

# A bad BRASA_CONV_TRAINING is an error from the first convolution, not an
# abort when the library loads.
(cd "$dir" && BRASA_CONV_TRAINING=bogus "$program" --model cnn --train-samples 256 \
  --run-dir "$dir") >"$dir/out" 2>"$dir/err"
status=$?
[ "$status" -eq 1 ] || fail "BRASA_CONV_TRAINING=bogus exited with $status, expected 1"
has err "BRASA_CONV_TRAINING: expected onednn, im2col or auto, got 'bogus'"

# A run of 2 epochs: model-named files, a chart with both epochs.
run 0 "${small[@]}" --epochs 2
has out "chart: $dir/fashion_mnist_mlp_metrics.svg"
for f in fashion_mnist_mlp.safetensors fashion_mnist_mlp_metrics.csv fashion_mnist_mlp_metrics.svg; do
  [ -f "$dir/$f" ] || fail "no $f"
done
[ "$(wc -l <"$dir/fashion_mnist_mlp_metrics.csv")" -eq 3 ] || fail "the CSV has no 2 epochs"
has fashion_mnist_mlp_metrics.svg "<svg xmlns='http://www.w3.org/2000/svg'"
has fashion_mnist_mlp_metrics.svg "</svg>"
[ "$(grep -c "<circle" "$dir/fashion_mnist_mlp_metrics.svg")" -eq 6 ] ||
  fail "the chart does not hold 3 series of 2 epochs"
if command -v xmllint >/dev/null; then
  xmllint --noout "$dir/fashion_mnist_mlp_metrics.svg" || fail "the chart is not well-formed XML"
fi
accuracy="$(sed -n 's/^final test accuracy \([0-9.]*\)%$/\1/p' "$dir/out")"
[ -n "$accuracy" ] || fail "no final accuracy"

# --resume of a finished run says so, with the stored accuracy.
run 0 --model mlp --run-dir "$dir" --resume
has out "is complete: it trained 2 of 2 epochs; test accuracy $accuracy%"
lacks out "0.00%"
lacks out "epoch 3"

# A conflicting model or optimizer is refused; a new lr is applied and said.
run 2 --run-dir "$dir" --checkpoint "$dir/fashion_mnist_mlp.safetensors" --resume --optimizer sgd
has err "--optimizer sgd conflicts with the checkpoint"
run 2 --run-dir "$dir" --checkpoint "$dir/fashion_mnist_mlp.safetensors" --resume --model cnn
has err "--model cnn conflicts with the checkpoint"
run 0 --model mlp --run-dir "$dir" --resume --epochs 3 --lr 0.0005
has out "resume: --lr 0.0005 applied (the checkpoint's run had 0.001)"
has out "optimizer adam (lr 0.0005)"
has out "2000 training samples"  # the checkpoint's --train-samples
has out "epoch 3: train loss"
[ "$(grep -c "<circle" "$dir/fashion_mnist_mlp_metrics.svg")" -eq 9 ] ||
  fail "the chart does not hold the 3 epochs after --resume"
# Resumed again without --lr: the lr of the last run holds.
run 0 --model mlp --run-dir "$dir" --resume --epochs 4
has out "optimizer adam (lr 0.0005)"

# The CNN's run does not touch the MLP's files.
before="$(md5sum "$dir"/fashion_mnist_mlp*)"
run 0 --model cnn --train-samples 500 --run-dir "$dir" --epochs 1
[ -f "$dir/fashion_mnist_cnn.safetensors" ] || fail "no CNN checkpoint"
[ -f "$dir/fashion_mnist_cnn_metrics.svg" ] || fail "no CNN chart"
[ "$before" = "$(md5sum "$dir"/fashion_mnist_mlp*)" ] || fail "the CNN run changed the MLP's files"

# The other programs follow the same rules.
(cd "$dir" && "$hogwild" --processes 2x) >"$dir/out" 2>"$dir/err"
[ $? -eq 2 ] || fail "hogwild --processes 2x did not exit 2"
has err "--processes expects a whole number"
(cd "$dir" && "$hogwild" --help) >"$dir/out" 2>"$dir/err"
[ $? -eq 0 ] || fail "hogwild --help did not exit 0"
has out "usage: hogwild"

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "ok"

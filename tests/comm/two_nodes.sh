#!/usr/bin/env bash
# Runs PROGRAM ARGS... as a job of 2 brasarun "nodes" of 2 ranks each on
# loopback (the second node joins at the port the first one reports); fails
# when either node fails.
#   two_nodes.sh BRASARUN PROGRAM [ARGS...]
set -uo pipefail
brasarun=$1
shift
dir="$(mktemp -d)"
pid0=
cleanup() {
  [ -n "$pid0" ] && kill "$pid0" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
# The nodes of one job share a secret.
export BRASA_JOB_TOKEN="two-nodes-$$-$RANDOM"
"$brasarun" --nnodes 2 --node-rank 0 --nproc-per-node 2 "$@" >"$dir/node0.out" 2>"$dir/node0.err" &
pid0=$!
port=
for _ in $(seq 300); do
  port="$(sed -n 's/.*rendezvous listening on port \([0-9]*\).*/\1/p' "$dir/node0.err" | head -1)"
  [ -n "$port" ] && break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "two_nodes.sh: node 0 reported no rendezvous port" >&2
  cat "$dir/node0.err" >&2
  exit 1
fi
"$brasarun" --nnodes 2 --node-rank 1 --nproc-per-node 2 --master-port "$port" "$@" \
  >"$dir/node1.out" 2>&1
rc1=$?
wait "$pid0"
rc0=$?
pid0=
cat "$dir/node0.out" "$dir/node0.err" "$dir/node1.out"
echo "node 0 exited with $rc0, node 1 with $rc1"
[ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ]

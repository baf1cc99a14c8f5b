# Reads the `result brasa|torch <what> <value> <unit>` lines of cuda_bench and
# cuda_bench_torch.py and prints a brasa/torch ratio line for each measure both
# made, in the order cuda_bench printed them (used by scripts/bench cuda and
# scripts/device_check). Times (ms, us): lower is better; rates: higher.
$1 == "result" {
  key = $3
  v[$2 " " key] = $4
  unit[key] = $5
  if ($2 == "brasa" && !(key in seen)) { seen[key] = 1; order[++n] = key }
}
END {
  for (i = 1; i <= n; ++i) {
    k = order[i]
    if (!(("torch " k) in v) || v["torch " k] == 0) continue
    better = (unit[k] == "ms" || unit[k] == "us") ? "lower" : "higher"
    printf "ratio %s brasa/torch %.2f (%s is better)\n", k, v["brasa " k] / v["torch " k], better
  }
}

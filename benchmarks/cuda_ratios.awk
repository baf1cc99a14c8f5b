# Reads the `result brasa|torch <what> <value> <unit>` lines of cuda_bench and
# cuda_bench_torch.py and prints a brasa/torch ratio line for each measure both
# made (used by scripts/bench cuda and scripts/device_check).
$1 == "result" { v[$2 " " $3] = $4 }
END {
  n = split("tiny_op_host_us mlp_step_ms cnn_step_ms resnet_stack_step_ms resnet_stack_benchmark_mode_step_ms randn_16M_ms dropout_16M_ms sort_16M_ms sort_rows_4096x1024_ms index_rows_1M_ms index_put_acc_1M_ms masked_select_16M_ms", lower)
  for (i = 1; i <= n; ++i)
    if (("torch " lower[i]) in v && ("brasa " lower[i]) in v)
      printf "ratio %s brasa/torch %.2f (lower is better)\n", lower[i], v["brasa " lower[i]] / v["torch " lower[i]]
  n = split("add_256MB_GBps gemm_4096_TFLOPs", higher)
  for (i = 1; i <= n; ++i)
    if (("torch " higher[i]) in v && ("brasa " higher[i]) in v)
      printf "ratio %s brasa/torch %.2f (higher is better)\n", higher[i], v["brasa " higher[i]] / v["torch " higher[i]]
}

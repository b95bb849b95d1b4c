"""GRPO (layer 5): finished groups become packed training rows (`samples`, `packing`,
`step_rows`), TRL's rollout worker feeds them (`worker`) to one trainer per harness
(`trainer`, `trl_compat`), each in its own process (`trainer_process`), with per-step
metrics (`metrics`).
"""

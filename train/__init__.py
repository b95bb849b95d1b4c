"""train: load any folder of Harbor tasks, split it, report its imbalance, and run
guarded asynchronous GRPO with one LoRA adapter per agent harness.

One sub-package per layer of ARCHITECTURE.md, so the folder a module sits in is its
layer (tests/test_layers.py reads the folders): `data` (task sets: loading, split,
imbalance, config, reward), `rollout`, `serving`, `harnesses`, `guard`, `evaluate`
(the rollout stack), `grpo` and `launch` (training). The package root keeps only the
command (`cli`, `python -m train`) and its console (`ui`).
"""

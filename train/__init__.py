"""train: load any folder of Harbor tasks, split it, report its imbalance, and plan (later:
run) guarded asynchronous GRPO with one LoRA adapter per agent harness.

Modules: `tasks` (loading), `split`, `imbalance`, `plot`, `reward`, `config`, `plan`,
`cli` (`python -m train`). `guard/` and `serving/` hold the guard proxy and the vLLM side.
"""

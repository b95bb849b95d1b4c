"""Benchmark decontamination: is a mined task a benchmark's test instance in disguise?

`tables` loads what a task is checked against (SWE-bench-style instance tables with the
`--instances` loader, folders of tasks, the held-out split of a previous training run);
`facts` reads what a task says about itself; `index` builds the lookups once per run
(MinHash/LSH over statements with `datasketch`); `matching` applies the rules and
`report` writes the per-task block and the run's counts. Rules and thresholds:
docs/decontamination.md."""

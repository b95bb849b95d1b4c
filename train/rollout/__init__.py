"""Rollouts (layer 4): the records a rollout produces (`contract`), the scheduler that
keeps a trainer's harness sessions busy (`scheduler`), and the rollout stack's console
(`ui`), which serving, harnesses, guard and evaluation print through.
"""

"""train: split task folders, report their imbalance, and run guarded async GRPO.

Not built yet (issues 5-8); the package exists so the distribution layout is final.
"""

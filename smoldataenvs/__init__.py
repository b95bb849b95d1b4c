"""smoldataenvs: Jupyter notebooks with saved outputs -> data-analysis question tasks.

Not built yet (issue 4); the package exists so the distribution layout is final.
"""

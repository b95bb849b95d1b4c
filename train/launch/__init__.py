"""Launching a run (layer 5): what a run would start (`plan`), the real run that
starts the server, the guard and one trainer process per harness (`run`), and the
split plots (`plot`).
"""

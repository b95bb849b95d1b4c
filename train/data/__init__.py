"""Task sets (layer 3): load a folder of Harbor tasks, split it, report its imbalance,
and the training config and reward that read them. Nothing here starts a container or a
model, so all of it is checked without Docker or a GPU.
"""

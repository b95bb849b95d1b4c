"""smoldataenvs: Jupyter notebooks with saved outputs -> data-analysis question tasks.

Entry points for callers (e.g. `repo2rlenv mine`):

    from smoldataenvs import NotebookOptions, NotebookPipeline, is_notebook_source
    from repo2rlenv.emit import emit_all
    if is_notebook_source(path):
        report = emit_all(NotebookPipeline(NotebookOptions(dataset=str(path))), out_dir)

`smoldataenvs.options.NotebookFlags` is the notebook options model `repo2rlenv mine`
mixes into its own (the flags are generated from it).
"""

from smoldataenvs.notebook_files import is_notebook_source
from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.options import NotebookOptions

__all__ = ["NotebookOptions", "NotebookPipeline", "is_notebook_source"]

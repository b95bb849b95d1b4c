"""`python -m train`: see `train.cli`; `python -m train eval ...`: see `train.evaluate.cli`."""

import sys


def _main() -> int:
    if sys.argv[1:2] == ["eval"]:
        from train.evaluate.cli import main as eval_main

        return eval_main(sys.argv[2:])
    from train.cli import main

    return main()


sys.exit(_main())

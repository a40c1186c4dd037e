"""Spatial k-fold cross-validation of models on one scene: ``hsi evaluate``.

Each labelled block of the block split is test exactly once: the blocks are dealt into K
class-stratified folds (:func:`hsi.preprocess.split_blocks.block_folds`), and fold ``k``'s run
is exactly ``hsi train --folds K --fold k`` (its own validation blocks from its training side,
its own buffer, its preprocessing fitted on its own training pixels). The modules, one job each:

- :mod:`hsi.evaluate.options`: the options of the command (:class:`EvaluateOptions`);
- :mod:`hsi.evaluate.folds`: the fold runs an evaluation makes (:class:`FoldJob`);
- :mod:`hsi.evaluate.running`: one fold run, reused when its folder holds it finished, and the
  whole evaluation (:func:`run_evaluation`);
- :mod:`hsi.evaluate.leaderboard`: mean ± std per model over its fold runs;
- :mod:`hsi.evaluate.stats`: the paired comparison of every model with the best;
- :mod:`hsi.evaluate.outputs`: the leaderboard files, committed as one transaction.
- :mod:`hsi.evaluate.curve`: the evaluation at several label budgets, and the learning curve.

Importing this package imports neither torch nor Lightning (the command's parser needs only
:mod:`hsi.evaluate.options`).
"""

from hsi.evaluate.options import DEFAULT_FOLDS, DEFAULT_MODELS, EvaluateOptions

__all__ = ["DEFAULT_FOLDS", "DEFAULT_MODELS", "EvaluateOptions"]

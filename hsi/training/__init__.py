"""Lightning training: the classification task, its metrics and the run driver."""

from hsi.training.metrics import scores_from_confusion
from hsi.training.task import IGNORE_INDEX, HSIClassifier

__all__ = ["HSIClassifier", "IGNORE_INDEX", "scores_from_confusion"]

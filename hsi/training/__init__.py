"""Lightning training: the classification task, its metrics, the prediction writer and the run driver."""

from hsi.training.metrics import scores_from_confusion
from hsi.training.task import IGNORE_INDEX, HSIClassifier
from hsi.training.writer import PredictionWriter

__all__ = ["HSIClassifier", "IGNORE_INDEX", "PredictionWriter", "scores_from_confusion"]

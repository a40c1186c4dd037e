"""hsi: leakage-free deep learning on hyperspectral remote-sensing scenes."""

__version__ = "0.1.0"

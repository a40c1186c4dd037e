"""The parts :class:`~hsi.data.datamodule.HSIDataModule` is a thin Lightning class over: its options, its opened
sources, their splits, its loaders and its reports, one module each."""

"""The package's exception tree.

Every leaf also derives from the builtin a caller would naturally catch
(``FileNotFoundError``, ``ValueError``, ``RuntimeError``), so ``except ValueError``
keeps working for code that does not know about ``hsi``. Messages name the file,
key or argument, what was expected and what was found, and the fix when there is one.
"""

from __future__ import annotations


class HSIError(Exception):
    """Base class of every error raised on purpose by ``hsi``."""


class DatasetNotFoundError(HSIError, FileNotFoundError):
    """A scene's files are not where they were looked for (and could not be downloaded)."""


class CubeFormatError(HSIError, ValueError):
    """A file could not be read as a cube or label map: corrupt, truncated, wrong kind."""


class VariableKeyError(CubeFormatError):
    """A ``key=`` (MATLAB variable / HDF5 dataset) is missing, or discovery found none or several."""


class LayoutError(CubeFormatError):
    """The axis order of an array (``HWC`` / ``CHW`` / ...) is invalid or ambiguous."""


class WavelengthError(CubeFormatError):
    """Wavelengths are not strictly monotonic, do not match the band count, or have bad units."""


class BandMismatchError(CubeFormatError):
    """The band count differs from what was expected (``expected_bands=``, a fitted transform...)."""


class StateFormatError(HSIError, ValueError):
    """A saved pipeline or split state is corrupt, of an unknown kind, or of an unknown version."""


class ModelSizeError(HSIError, ValueError):
    """A size argument (``num_bands``, ``patch_size``, a kernel...) the model cannot use."""


class UnknownModelError(HSIError, ValueError):
    """A model name that is not in the registry."""


class UsageError(HSIError, ValueError):
    """A command-line mistake found by the parser (the message is the one ``error:`` line)."""


class ShapeMismatchError(HSIError, ValueError):
    """Two arrays that must agree in shape do not (labels vs cube, mask vs cube...)."""


class UnknownSceneError(HSIError, ValueError):
    """A scene name that is not in the registry."""


class IntegrityError(HSIError, ValueError):
    """A downloaded or placed file does not have the expected checksum, size or shape."""


class ArrayTypeError(HSIError, TypeError, ValueError):
    """An array a transformer cannot take: sparse, complex, or holding values that are not numbers."""


class NotFittedError(HSIError, ValueError):
    """A transformer was used before ``fit``."""


class SplitError(HSIError, ValueError):
    """Split arguments that cannot produce a valid train/val/test split."""


class CacheError(HSIError, RuntimeError):
    """A patch cache could not be built or verified."""


class OptionError(HSIError, ValueError):
    """An argument (a command-line option, a constructor argument) with a value that is not allowed.

    Parameters
    ----------
    option : str
        The argument's name as the caller wrote it (``patch_size``); the command line shows
        it as ``--patch-size``.
    value : object
        The value found.
    allowed : str
        What would have been accepted, in words ("an odd integer >= 3").
    """

    def __init__(self, option: str, value: object, allowed: str) -> None:
        self.option, self.value, self.allowed = option, value, allowed
        super().__init__(f"{option}: {value!r}: {allowed}")


class ModelFileError(HSIError, ValueError):
    """A saved model file (e.g. a classical baseline's ``.npz``) that is corrupt, foreign or inconsistent."""


class NonFiniteLossError(HSIError, RuntimeError):
    """Training produced a NaN or infinite loss; the run is stopped instead of saving a model of NaNs."""


class RunOutputError(HSIError, FileExistsError):
    """An output folder that already holds results a run would replace (or is not a folder)."""


class CheckpointError(HSIError, ValueError):
    """A checkpoint that cannot be read, or whose settings conflict with the options given."""


class NonFiniteInputError(HSIError, ValueError):
    """NaN or infinite values would reach a model (e.g. a scene window at inference)."""


class NonFiniteWarning(UserWarning):
    """Training pixels with NaN or infinite values were left out of the fitted statistics."""


class StratificationWarning(UserWarning):
    """Some class could not be given both training and test pixels."""


class LabelBudgetWarning(UserWarning):
    """A label budget asked for more pixels of some class than its training (or validation) blocks hold."""


class LeakageWarning(UserWarning):
    """A split that lets information about test pixels reach training (e.g. a random pixel split)."""


class DataQualityWarning(UserWarning):
    """A cube read as asked but suspicious: NaN/infinite values, or one constant value everywhere."""


class OverwriteError(HSIError, FileExistsError):
    """A write would replace a file that ``hsi`` did not write (e.g. a user's ``survey.npz``)."""


class NoDataError(HSIError, ValueError):
    """Every pixel of a scene is no-data (a NaN or infinite band, or the file's no-data value): nothing to classify."""


class DiskFullError(HSIError, OSError):
    """A write ran out of disk space (or would: the free space checked before starting is too small).

    The message names the folder, the bytes needed and the bytes free; what the run had
    written is removed, so nothing half-written is left behind.
    """


class FileAccessError(HSIError, OSError):
    """A file or folder given by the user that cannot be read or written as asked.

    Permission denied, a folder where a file is expected (or a file where a folder is), a
    path on a read-only filesystem: the message names the path, what was being done and
    the system's reason.
    """


class MissingFileError(HSIError, FileNotFoundError):
    """A file that ``hsi`` wrote and is asked to read back (a saved pipeline, a classical model) is not there."""


class GeoRefError(CubeFormatError):
    """A georeference that cannot be used: a transform without a CRS, a rotated grid, or two files on different grids."""


class ClassMatchError(HSIError, ValueError):
    """A label map whose classes cannot be matched to a checkpoint's: no shared name, and no names to match by id."""


class DegenerateMapError(HSIError, ValueError):
    """A map of another scene that is all one class while its labels hold several of the checkpoint's classes: the cube's values are not what the network was trained on."""


class CollectionError(HSIError, ValueError):
    """A scene collection (``scenes=``, its YAML file or pack) that cannot be used: unknown keys, duplicate names, bands or classes that do not combine."""


class PluginError(HSIError, RuntimeError):
    """A registered plug-in (an output format of ``hsi infer``) that broke its contract: a file it wrote without declaring it, one it declared and did not write, a declared path outside the output folder, a size that is not a count of bytes. The message names the plug-in."""


class PluginWarning(UserWarning):
    """An installed package's plug-in (an ``hsi.readers``, ``hsi.sinks`` or ``hsi.models`` entry point) that could not be loaded: an import error, an object of the wrong type, a name already taken. The message names the group, the entry point, its package and the error; the plug-in is skipped and the others work."""


class NotHyperspectralWarning(UserWarning):
    """A file read as a cube that looks like something else: a colour photo (3 or 4 bands of 8-bit integers without wavelengths)."""


class SceneShiftWarning(UserWarning):
    """A scene whose values, after the fitted preprocessing, lie far from the training scenes' (other units or value range)."""


class ClassMatchWarning(UserWarning):
    """Classes of a label map that a checkpoint never saw (not scored), or a map of another scene that is all one class."""


class AssumedBandsWarning(DataQualityWarning):
    """A cube without band wavelengths read as if it were on a checkpoint's bands (its band count matches)."""


class UnitsWarning(DataQualityWarning):
    """What a file, a declaration or an option says about a cube's values or bands looks wrong: reflectance far above 1, a scale factor that multiplies to implausible values, band widths that do not fit the wavelengths, or a collection entry's declaration replacing the file's own."""

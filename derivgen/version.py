"""The package version, importable by the generator and the runtime alike."""
__version__ = "0.1.0"

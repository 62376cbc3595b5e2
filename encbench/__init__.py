"""encbench: benchmark categorical encoders for binary classification."""
__version__ = "0.1.0"

"""encbench: benchmark categorical encoders on binary, multiclass and regression targets.

A batch engine runs the published protocol (Matteucci et al. 2023) into a DuckDB results
database, which ships the study's results and encbench's own; a Streamlit app and the command
line (``python -m encbench``) rank encoders, run them on your data or your own encoder, advise
which to use and export every table and chart with its provenance. Start with README.md; the
user guide is docs/user-guide.md and the protocol docs/protocol.md.
"""
__version__ = "0.1.0"

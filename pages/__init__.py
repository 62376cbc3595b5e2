"""Streamlit pages (UI only; logic lives in encbench/)."""

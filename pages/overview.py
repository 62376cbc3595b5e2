"""Overview: what is in the results database."""
import streamlit as st

from encbench.store import queries
from pages.common import reader_or_stop

st.title("encbench")
st.caption("Benchmark categorical encoders for binary classification.")

reader = reader_or_stop()
info = queries.summary(reader)
cols = st.columns(5)
for col, (label, key) in zip(cols, [("Datasets", "datasets"), ("Encoders", "encoders"),
                                    ("Models", "models"), ("Results", "results"), ("Runs", "runs")]):
    col.metric(label, f"{info[key]:,}")
st.dataframe(queries.counts_by(reader, "tuning"), hide_index=True)

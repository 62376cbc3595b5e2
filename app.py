"""encbench Streamlit entry point: page setup and navigation only (DESIGN.md section 11)."""
import streamlit as st

st.set_page_config(page_title="encbench", page_icon=":bar_chart:", layout="wide")

pages = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
]
st.navigation(pages).run()

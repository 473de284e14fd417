"""Precision what-if (a placeholder until its page lands)."""

import streamlit as st

st.title("Precision what-if")

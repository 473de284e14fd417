"""The engine: judgments, rankings and their tie groups, per-rank profiles, kernels,
moments, sampling."""

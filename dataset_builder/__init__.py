"""grid2matrix dataset builder: deterministic G2M grids, a Hub-ready release, and its verification."""

__version__ = "0.1.0"

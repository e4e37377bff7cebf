"""Offline data sets for the example programs: each loader says where its data comes from."""

"""Probing frozen VLM vision encoders on the G2M probing splits (8k/2k/10k), with features cached once."""

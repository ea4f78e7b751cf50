"""Example models for the closed tuning loop (random weights, built from configs; nothing downloaded)."""

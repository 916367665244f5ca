"""Shared pytest setup: quiet TensorFlow logs and run it on CPU unless a GPU is wanted."""
import os

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

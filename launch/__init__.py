"""Experiment programs. TensorFlow's C++ info logs are hidden unless the user sets otherwise."""
import os

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

# The README's two commands. `make demo`: install, then train IMPALA on Atari Breakout on this
# machine (--preset=quick), evaluate it and print the score table against the paper.
# `make test`: install, then run the test suite, a file at a time on each of TEST_WORKERS
# workers (the launch tests leave a core idle while their roles start). TF=gpu installs the CUDA
# build of TensorFlow.
PYTHON ?= python3.11
TF ?= cpu
VENV := .venv
STAMP := $(VENV)/.installed-$(TF)
TEST_WORKERS ?= 2
DEMO_GAME ?= breakout
DEMO_DIR ?= runs/demo_$(DEMO_GAME)

.PHONY: demo test install clean

install: $(STAMP)

$(STAMP): setup.py
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found. Install Python 3.11 (e.g. 'apt-get install python3.11 python3.11-venv', or pyenv) or run 'make PYTHON=/path/to/python3.11 ...'"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { echo "error: $(PYTHON) is Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'), distrl needs 3.11 (the pinned TensorFlow 2.15 and dm-reverb 0.14 wheels). Run 'make PYTHON=/path/to/python3.11 ...'"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[$(TF),test,ray]'
	@touch $@

demo: $(STAMP)
	$(VENV)/bin/python -m launch.impala_atari --game=$(DEMO_GAME) --preset=quick --run_dir=$(DEMO_DIR)

test: $(STAMP)
	$(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

clean:
	rm -rf $(VENV) *.egg-info

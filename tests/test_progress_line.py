"""The console progress line: frames, rate and the time left at that rate."""
import io

from agents.core import logging as run_logging


def test_eta_is_the_frames_left_at_the_measured_rate():
    assert run_logging.eta(100_000, 2_000.0) == '0m50s'
    assert run_logging.eta(20_000_000, 3_000.0) == '1h51m'
    assert run_logging.eta(0, 1.0) == '0m00s'
    assert run_logging.eta(10, 0.0) == 'n/a'


def test_progress_line_shows_rate_eta_and_returns():
    stream = io.StringIO()
    line = run_logging.ProgressLine('learner_1 learning_rate=0.0003', 1_000, 0.0, stream)
    line.maybe_print(0, {'loss': 1.0})
    line.add_returns([1.0, 3.0])
    line.maybe_print(500, {'loss': 0.5}, force=True)
    text = stream.getvalue()
    assert text.startswith('[learner_1 learning_rate=0.0003] frames 500 (50.0%) | ')
    assert ' frames/s | ETA ' in text and '| return 2.0 (last 2 games) | loss 0.5' in text

"""Reading the papers' tables from `paper_tables/data/*.csv`.

Each file opens with `# paper: ..., table: ..., protocol: ..., frames: ...` and more comment
lines, then a CSV header. Numeric cells become floats, empty cells None (not printed or not
readable in the paper), anything else stays a string.
"""
import csv
import dataclasses
import pathlib
import re

DATA_DIR = pathlib.Path(__file__).parent / 'data'


@dataclasses.dataclass(frozen=True)
class Table:
    """One paper table: its header fields (paper, table, protocol, frames) and its rows."""
    filename: str
    meta: dict
    columns: tuple
    rows: tuple

    def column(self, name):
        """The values of one column, in row order."""
        if name not in self.columns:
            raise ValueError(f'{self.filename} has no column {name!r}; it has {self.columns}')
        return [row[name] for row in self.rows]


def _cell(text):
    if text == '':
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _meta(first_line):
    """'# paper: impala, table: C.1, ...' -> {'paper': 'impala', 'table': 'C.1', ...}."""
    parts = re.split(r'(?:^|, )(paper|table|protocol|frames): ', first_line.lstrip('# '))
    return dict(zip(parts[1::2], parts[2::2]))


def load(filename):
    """The table in `paper_tables/data/<filename>`."""
    lines = (DATA_DIR / filename).read_text().splitlines()
    comments = [line for line in lines if line.startswith('#')]
    reader = csv.DictReader(line for line in lines if not line.startswith('#'))
    rows = tuple({key: _cell(value) for key, value in row.items()} for row in reader)
    return Table(filename, _meta(comments[0]), tuple(reader.fieldnames), rows)


def data_files():
    """Every table file in `paper_tables/data/`."""
    return sorted(path.name for path in DATA_DIR.glob('*.csv'))

"""Which way each model summarises, as ``hiermem-tui calibrate`` measured it (the model_ways table).

A model summarises by ``titles`` (a title over the chat's key lines) until a calibration finds that it writes
faithfully enough to ``writes`` its summaries itself (``summarize/calibrate.py``). One row a model: the latest
measurement and the figures it was decided on. ``x`` and ``x:latest`` are one model.
"""

from __future__ import annotations

from dataclasses import dataclass

from .db import Db
from .models import utcnow


@dataclass(frozen=True, slots=True)
class ModelWay:
    """One model's measured way, with the scores (shares of the pack's probes) it was decided on."""

    model: str
    way: str
    backend: str
    host: str
    titles_score: float
    writes_score: float
    titles_invented: int
    writes_invented: int
    pack: str
    calls: int
    seconds: float
    measured_at: str = ""


_COLS = ("model, way, backend, host, titles_score, writes_score, titles_invented, writes_invented, pack, calls, "
         "seconds, measured_at")


def _canonical(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


class Ways:
    """The model_ways table."""

    def __init__(self, db: Db) -> None:
        self.db = db

    def get(self, model: str | None) -> ModelWay | None:
        """What was measured of ``model`` (None: never calibrated)."""
        if not model:
            return None
        rows = self.db.conn.execute(f"SELECT {_COLS} FROM model_ways WHERE model IN (?, ?)",
                                    (model, _canonical(model))).fetchall()
        exact = [r for r in rows if r[0] == model]
        row = (exact or rows or [None])[0]
        return ModelWay(*row) if row else None

    def all(self) -> dict[str, str]:
        """Every calibrated model's way (model → ``titles`` or ``writes``)."""
        return {model: way for model, way in self.db.conn.execute("SELECT model, way FROM model_ways")}

    def record(self, measured: ModelWay) -> None:
        """Keep ``measured`` as its model's way (replacing an earlier measurement)."""
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO model_ways ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (measured.model, measured.way, measured.backend, measured.host, measured.titles_score,
                 measured.writes_score, measured.titles_invented, measured.writes_invented, measured.pack,
                 measured.calls, measured.seconds, measured.measured_at or utcnow()))

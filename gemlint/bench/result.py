"""What one benchmark metric reports, as printed by ``gemlint bench --format json``."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path


class Status(str, enum.Enum):
    MEASURED = "measured"
    SKIPPED = "skipped"  # the device, library or toolchain it needs is missing
    ERROR = "error"  # the pair failed while running: a bug in the pair or its environment


@dataclass(frozen=True)
class Result:
    code: str
    metric: str
    unit: str
    bad: float | None
    good: float | None
    ratio: float | None
    device: str | None
    status: Status
    reason: str | None = None
    #: True for counts and bytes that do not depend on timing: their direction, bad above good, is asserted in tests.
    deterministic: bool = False
    #: For a figure that depends on timing: how many runs ``bad`` and ``good`` are the medians of, and the
    #: lowest and highest run of each. None for deterministic figures and single runs.
    runs: int | None = None
    bad_range: tuple[float, float] | None = None
    good_range: tuple[float, float] | None = None

    @property
    def within_noise(self) -> bool:
        """A timing whose bad and good runs overlap (or that ran once): no difference can be claimed."""
        if self.deterministic:
            return False
        if self.bad_range is None or self.good_range is None:
            return True
        return self.bad_range[0] <= self.good_range[1] and self.good_range[0] <= self.bad_range[1]

    @classmethod
    def skipped(cls, code: str, reason: str, *, metric: str = "-", unit: str = "", device: str | None = None) -> "Result":
        return cls(code, metric, unit, None, None, None, device, Status.SKIPPED, reason)

    @classmethod
    def error(cls, code: str, reason: str, *, device: str | None = None) -> "Result":
        return cls(code, "-", "", None, None, None, device, Status.ERROR, reason)

    def to_json(self) -> dict:
        data = asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Result":
        fields = dict(data)
        fields["status"] = Status(fields["status"])
        for key in ("bad_range", "good_range"):
            if fields.get(key) is not None:
                fields[key] = tuple(fields[key])
        return cls(**{key: fields.get(key) for key in cls.__dataclass_fields__ if key in fields})


def ratio(bad: float, good: float) -> float | None:
    """bad / good, or None where it has no finite value (good is 0: the good variant costs nothing)."""
    if good == 0 or not math.isfinite(bad) or not math.isfinite(good):
        return None
    return bad / good


def read_results(path: Path) -> list[Result]:
    """Every row of a ``gemlint bench --format json`` report; ValueError, naming the file, for anything else."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read {path}: {error}") from None
    if not isinstance(rows, list):
        raise ValueError(f"{path} is not a `gemlint bench --format json` report: it holds no array of results")
    try:
        return [Result.from_json(row) for row in rows]
    except KeyError as error:
        raise ValueError(f"{path} is not a `gemlint bench --format json` report: a result has no {error} key") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path} is not a `gemlint bench --format json` report: {error}") from None

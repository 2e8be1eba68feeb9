"""Calibration files: per-judge thresholds (and optional unsure bands) fitted on a user's
own labels for one model file, written by `localjudge calibrate` and applied by
`localjudge eval --calibration FILE` and `localjudge agreement --calibration FILE`.

```toml
model = "qwen2.5-coder-1.5b-instruct-q4_k_m"
model_sha256 = "…"                 # the file it was fitted for: another is refused

[judges.groundedness]
threshold = 0.6123                 # overrides the catalogue's threshold for this judge
unsure_low = 0.55                  # optional: P(yes) in [unsure_low, unsure_high) is
unsure_high = 0.68                 #   rated "unsure" (left out of pass rates)
n = 80                             # the rest is a record of the fit, not read back
cv_balanced_accuracy = 0.81
```

Fitting (`fit_judge`): the threshold that maximises balanced accuracy on the labelled
units (agreement.fit_threshold); its agreement is estimated by stratified k-fold cross-
validation (fixed seed): each fold decided by the threshold fitted on the others. The
catalogue's threshold needs no fit, so its agreement on all units is shown beside it, and
`cv_gain` is the difference (cross-validated minus current balanced accuracy, paired
bootstrap interval).
With a target, the band is the one that keeps the most units decided while balanced
accuracy on the decided units reaches the target (agreement.fit_band), cross-validated
the same way (threshold and band fitted on the other folds).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from localjudge import agreement
from localjudge.agreement import Rule
from localjudge.errors import UsageError

FOLDS = 5
CV_SEED = 20241121
# Fewer labels than this of either class get a warning: the fit is mostly noise.
FEW = 10


@dataclass(frozen=True)
class Calibration:
    """What eval needs from a calibration file."""

    path: str
    sha256: str
    model: str
    model_sha256: str
    thresholds: Mapping[str, float]
    bands: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def check_model(self, model_id: str, model_sha256: str) -> None:
        """Refuse (UsageError, exit 2) a model file other than the one fitted for."""
        if model_sha256 != self.model_sha256:
            raise UsageError(
                f"{self.path} was fitted for model {self.model} (SHA-256 "
                f"{self.model_sha256[:12]}…), not for {model_id} ({model_sha256[:12]}…): its "
                f"thresholds do not carry over; pass --model {self.model}, or refit with "
                f"`localjudge calibrate LABELLED --model {model_id} --out FILE`"
            )

    def manifest(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "model": self.model}


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise UsageError(f"{where}: expected a number between 0 and 1")
    return float(value)


def load(path: str) -> Calibration:
    """Read and check a calibration file; UsageError (exit 2) says what is wrong."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"--calibration {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"--calibration {path}: not a TOML file ({exc})") from None
    model, sha = table.get("model"), table.get("model_sha256")
    judges = table.get("judges")
    if not isinstance(model, str) or not isinstance(sha, str) or not isinstance(judges, dict):
        raise UsageError(
            f"--calibration {path}: expected model, model_sha256 and [judges.NAME] tables "
            "(write one with `localjudge calibrate`)"
        )
    thresholds: dict[str, float] = {}
    bands: dict[str, tuple[float, float]] = {}
    for name, entry in judges.items():
        where = f"--calibration {path}: judges.{name}"
        if not isinstance(entry, dict) or "threshold" not in entry:
            raise UsageError(f"{where}: expected a table with a threshold")
        t = thresholds[name] = _number(entry["threshold"], f"{where}.threshold")
        if "unsure_low" in entry or "unsure_high" in entry:
            low = _number(entry.get("unsure_low"), f"{where}.unsure_low")
            high = _number(entry.get("unsure_high"), f"{where}.unsure_high")
            if not low <= t <= high:
                raise UsageError(f"{where}: expected unsure_low <= threshold <= unsure_high")
            bands[name] = (low, high)
    return Calibration(path, hashlib.sha256(data).hexdigest(), model, sha, thresholds, bands)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else '"nan"'
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)  # a TOML basic string


def dumps(header: Mapping[str, Any], judges: Mapping[str, Mapping[str, Any]], comment: str) -> str:
    """A calibration file's text: `header` keys, then a [judges.NAME] table each (None
    values are left out)."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    lines += [f"{k} = {_toml_value(v)}" for k, v in header.items() if v is not None]
    for name, entry in judges.items():
        lines += ["", f"[judges.{name}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in entry.items() if v is not None]
    return "\n".join(lines) + "\n"


def write(path: Path, text: str) -> None:
    """Write atomically (a temporary file renamed over `path`)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"--out {path}: cannot be written ({exc.strerror or exc})") from None


def _value(report: Mapping[str, Any] | None, key: str) -> float | None:
    if report is None:
        return None
    value = report[key]["value"]
    return None if value is None else float(value)


def fit_judge(
    y: Sequence[float],
    p: Sequence[float],
    groups: Sequence[int],
    current: float,
    unsure_target: float | None = None,
    folds: int = FOLDS,
) -> dict[str, Any]:
    """Fit one judge's threshold (and band) on its labelled units; see the module doc.

    Returns the fitted values, the cross-validated agreement and the current threshold's,
    and `notes` for the user (why something could not be fitted)."""
    ya, pa = np.asarray(y, dtype=np.float64), np.asarray(p, dtype=np.float64)
    out: dict[str, Any] = {"n": int(ya.size), "n_yes": int(ya.sum()), "notes": []}
    threshold = agreement.fit_threshold(ya, pa)
    out["current_threshold"] = current
    out["current"] = agreement.at_rule(ya, pa, Rule(current), groups)
    if threshold is None:
        out["notes"].append("the labels hold one class only: label both yes and no units")
        return out
    out["threshold"] = threshold
    n_yes, n_no = out["n_yes"], out["n"] - out["n_yes"]
    if min(n_yes, n_no) < FEW:
        out["notes"].append(
            f"only {n_yes} yes and {n_no} no labels: the fitted threshold is a rough guess "
            f"(label at least {FEW} of each; 50-100 rows in all)"
        )

    def fit_rule(yy: Any, pp: Any) -> Rule | None:
        t = agreement.fit_threshold(yy, pp)
        return None if t is None else Rule(t)

    out["cv"] = agreement.cross_validate(
        ya,
        pa,
        fit_rule,
        folds=folds,
        groups=groups,
        seed=CV_SEED,
        baseline=Rule(current).decide(pa)[0],
    )
    if out["cv"] is None:
        out["notes"].append("too few labels of one class for a cross-validated estimate")
    if unsure_target is not None:
        band = agreement.fit_band(ya, pa, threshold, unsure_target)
        if band is None:
            out["notes"].append(
                f"no unsure band reaches balanced accuracy {unsure_target} on the decided units"
            )
        elif band[0] == band[1]:
            out["notes"].append(f"the threshold alone reaches {unsure_target}: no band needed")
        else:
            out["unsure_band"] = band
            out["fitted"] = agreement.at_rule(ya, pa, Rule(threshold, band), groups)

            def fit_banded(yy: Any, pp: Any) -> Rule | None:
                t = agreement.fit_threshold(yy, pp)
                if t is None:
                    return None
                b = agreement.fit_band(yy, pp, t, unsure_target)
                return Rule(t, None if b is None or b[0] == b[1] else b)

            out["cv_banded"] = agreement.cross_validate(
                ya, pa, fit_banded, folds=folds, groups=groups, seed=CV_SEED
            )
    return out


def judge_entry(fit: Mapping[str, Any]) -> dict[str, Any]:
    """A fitted judge's [judges.NAME] table."""
    band = fit.get("unsure_band")
    cv, banded = fit.get("cv"), fit.get("cv_banded")
    return {
        "threshold": fit["threshold"],
        "unsure_low": band[0] if band else None,
        "unsure_high": band[1] if band else None,
        "n": fit["n"],
        "n_yes": fit["n_yes"],
        "cv_folds": cv["folds"] if cv else None,
        "cv_balanced_accuracy": _value(cv, "balanced_accuracy"),
        "cv_kappa": _value(cv, "kappa"),
        "current_threshold": fit["current_threshold"],
        "current_balanced_accuracy": _value(fit["current"], "balanced_accuracy"),
        "cv_gain": _value(cv, "gain"),
        "cv_coverage": _value(banded, "coverage"),
        "cv_balanced_accuracy_decided": _value(banded, "balanced_accuracy"),
    }

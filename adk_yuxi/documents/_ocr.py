"""Optical character recognition, offline: RapidOCR on ONNX Runtime with the PP-OCRv4
Chinese and English models that ship inside the `rapidocr-onnxruntime` wheel.

Nothing is downloaded at run time: the engine is built from the package's own model
files, and a missing file is reported as OCR being unavailable, never fetched. The
engine loads once per process, on first use, and recognises one image at a time.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adk_yuxi.errors import YuxiError

__all__ = ["OcrEngine", "OcrUnavailableError", "ocr_engine", "ocr_unavailable_reason"]

_MODELS = (
    "ch_PP-OCRv4_det_infer.onnx",
    "ch_ppocr_mobile_v2.0_cls_infer.onnx",
    "ch_PP-OCRv4_rec_infer.onnx",
)


class OcrUnavailableError(YuxiError, RuntimeError):
    """The OCR engine or its shipped models are not installed."""


def _model_dir() -> Path | None:
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "models"


def ocr_unavailable_reason() -> str | None:
    """Why OCR cannot run in this process (package or model files missing), or None."""
    models = _model_dir()
    if models is None:
        return (
            "the rapidocr-onnxruntime package is not installed: pip install 'adk-yuxi[documents]'"
        )
    missing = [name for name in _MODELS if not (models / name).is_file()]
    if missing:
        return f"OCR model files missing from the package: {', '.join(missing)}"
    return None


def _lines(boxes: Sequence[Any]) -> list[str]:
    """Recognised boxes in reading order: rows by vertical centre, left to right."""
    items = []
    for box, text, _score in boxes:
        ys = [point[1] for point in box]
        xs = [point[0] for point in box]
        items.append((min(ys), max(ys), min(xs), str(text)))
    items.sort(key=lambda item: (item[0] + item[1]) / 2)
    rows: list[list[tuple[float, float, float, str]]] = []
    for item in items:
        centre = (item[0] + item[1]) / 2
        if rows:
            top = min(i[0] for i in rows[-1])
            bottom = max(i[1] for i in rows[-1])
            if top <= centre <= bottom:
                rows[-1].append(item)
                continue
        rows.append([item])
    return [" ".join(i[3] for i in sorted(row, key=lambda i: i[2])) for row in rows]


class OcrEngine:
    """One RapidOCR instance built from the packaged models (no `config_path` lookups
    elsewhere, no hub), guarded by a lock: ONNX sessions are shared per process."""

    def __init__(self) -> None:
        reason = ocr_unavailable_reason()
        if reason is not None:
            raise OcrUnavailableError(reason)
        from rapidocr_onnxruntime import RapidOCR

        models = _model_dir()
        assert models is not None
        self._engine = RapidOCR(
            det_model_path=str(models / _MODELS[0]),
            cls_model_path=str(models / _MODELS[1]),
            rec_model_path=str(models / _MODELS[2]),
        )
        self._lock = threading.Lock()

    def recognise(self, image: Any) -> list[str]:
        """The text lines of an RGB image (a PIL image or an array), in reading order."""
        import numpy as np

        array = np.asarray(image.convert("RGB") if hasattr(image, "convert") else image)
        with self._lock:
            boxes, _elapsed = self._engine(array)
        return _lines(boxes or [])


_engine: OcrEngine | None = None
_engine_lock = threading.Lock()


def ocr_engine() -> OcrEngine:
    """The process's engine, loaded on first use; raises `OcrUnavailableError`."""
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = OcrEngine()
        return _engine

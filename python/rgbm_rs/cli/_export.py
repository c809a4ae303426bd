"""``rgbm export``: write a saved model in another format (ONNX, XGBoost's JSON)."""

from __future__ import annotations

from ._outputs import check_not_a_model, check_writable
from ._predict import load_model_file
from ._report import CLIError


def cmd_export(args, report) -> int:
    """Write the model in ``args.model`` to ``args.out`` in ``args.format``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``export`` arguments (``format``, ``model``, ``out``).
    report : Reporter
        Where to print progress.

    Returns
    -------
    int
        0 on success (errors raise :class:`CLIError`).
    """
    if args.format == "xgboost":
        return _export_xgboost(args, report)
    from .._onnx import to_onnx

    check_writable(args.out, "ONNX file", [("MODEL", args.model)])
    check_not_a_model(args.out, "an ONNX model")
    est, _ = load_model_file(args.model)
    try:
        model = to_onnx(est, args.out)
    except ImportError as e:
        raise CLIError(str(e)) from None
    except ValueError as e:
        raise CLIError(f"cannot export {args.model!r} to ONNX: {e}") from None
    except OSError as e:
        raise CLIError(f"cannot write {args.out!r}: {e.strerror or e}") from None
    outputs = ", ".join(o.name for o in model.graph.output)
    report.info(
        f"wrote {type(est).__name__} ({est.get_booster().n_rounds} rounds) as ONNX to {args.out}: "
        f"input X (float32, {est.n_features_in_} features), outputs {outputs}"
    )
    return 0


def _export_xgboost(args, report) -> int:
    """``--format xgboost``: ``save_model(out, format="xgboost")`` of the loaded model."""
    check_writable(args.out, "XGBoost model", [("MODEL", args.model)])
    check_not_a_model(args.out, "an XGBoost model")
    est, _ = load_model_file(args.model)
    try:
        est.save_model(args.out, format="xgboost")
    except ValueError as e:
        raise CLIError(f"cannot export {args.model!r} to XGBoost's format: {e}") from None
    except OSError as e:
        raise CLIError(f"cannot write {args.out!r}: {e.strerror or e}") from None
    report.info(
        f"wrote {type(est).__name__} ({est.get_booster().n_rounds} rounds) in XGBoost's JSON model format to "
        f"{args.out}: input float32 ({est.n_features_in_} features), categorical features as codes"
    )
    return 0

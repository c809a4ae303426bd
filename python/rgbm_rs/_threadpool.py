"""rgbm_rs's threads as a threadpoolctl library.

``threadpoolctl.threadpool_limits(n)`` (which scikit-learn and joblib use
to keep nested parallelism from oversubscribing the machine) then bounds
the threads of fits and predictions with ``n_jobs=None``, as it bounds
OpenMP and BLAS pools; ``threadpool_info()`` lists rgbm_rs with its
current default. The controller calls two C functions of the compiled
module through ctypes (threadpoolctl's interface for every library).
"""

from __future__ import annotations

__all__ = ["register"]


def register() -> None:
    """Register the controller (once; nothing when threadpoolctl is absent)."""
    try:
        import threadpoolctl
    except ImportError:  # scikit-learn needs it, but a broken install should still import
        return
    if any(getattr(c, "internal_api", None) == "rgbm_rs" for c in threadpoolctl._ALL_CONTROLLERS):
        return

    class _Controller(threadpoolctl.LibController):
        user_api = "rgbm_rs"
        internal_api = "rgbm_rs"
        # The compiled module's file name (_core.abi3.so / _core.cpython-*.so /
        # _core.pyd); the symbol below tells it from other packages' _core.
        filename_prefixes = ("_core",)
        check_symbols = ("rgbm_rs_get_num_threads",)

        def get_num_threads(self):
            fn = getattr(self.dynlib, "rgbm_rs_get_num_threads", None)
            return None if fn is None else int(fn())

        def set_num_threads(self, num_threads):
            fn = getattr(self.dynlib, "rgbm_rs_set_num_threads", None)
            if fn is not None:
                fn(int(num_threads))

        def get_version(self):
            from ._core import __version__

            return __version__

    threadpoolctl.register(_Controller)

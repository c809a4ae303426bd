//! RgbmError -> Python exceptions, and running core calls without the GIL.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;

use crate::cancel::Cancel;
use crate::error::RgbmError;

pub fn to_py(e: RgbmError) -> PyErr {
    match e {
        RgbmError::Io(_) => PyOSError::new_err(e.to_string()),
        RgbmError::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        RgbmError::OutOfMemory(_) => PyMemoryError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Runs `f` without the GIL on a helper thread while this thread polls for
/// Ctrl-C; a pending signal sets the `Cancel` that `f` receives, which
/// binning, the boosting loop, the tree growers and prediction poll. Panics
/// become RuntimeError, never a crash.
pub fn run_interruptible<R: Send>(
    py: Python<'_>,
    f: impl FnOnce(Cancel) -> Result<R, RgbmError> + Send,
) -> PyResult<R> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut signal: Option<PyErr> = None;
    let outcome = py.detach(|| {
        std::thread::scope(|s| {
            let (done_tx, done_rx) = mpsc::channel::<()>();
            let cancel = Cancel::on(stop.clone());
            let worker = s.spawn(move || {
                let r = f(cancel);
                let _ = done_tx.send(());
                r
            });
            loop {
                match done_rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if signal.is_none()
                            && let Err(e) = Python::attach(|py| py.check_signals())
                        {
                            signal = Some(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
            worker.join()
        })
    });
    match outcome {
        Err(_) => Err(PyRuntimeError::new_err(
            "internal error: the native code panicked; please report this",
        )),
        Ok(Err(RgbmError::Interrupted)) => {
            Err(signal.unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted")))
        }
        Ok(r) => r.map_err(to_py),
    }
}

/// Runs a short core call without the GIL (no interrupt polling).
pub fn run_detached<R: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<R, RgbmError> + Send,
) -> PyResult<R> {
    py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
        .map_err(|_| {
            PyRuntimeError::new_err("internal error: the native code panicked; please report this")
        })?
        .map_err(to_py)
}

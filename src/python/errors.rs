//! RgbmError -> Python exceptions, and running core calls without the GIL.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::ffi;
use pyo3::prelude::*;

use crate::cancel::Cancel;
use crate::error::RgbmError;

pub fn to_py(e: RgbmError) -> PyErr {
    match e {
        RgbmError::Io(_) => PyOSError::new_err(e.to_string()),
        RgbmError::Interrupted => PyKeyboardInterrupt::new_err("interrupted"),
        RgbmError::OutOfMemory(_) => PyMemoryError::new_err(e.to_string()),
        RgbmError::Threads(_) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// The thread that is running a Python callable (custom loss, metric or
/// callback) for a fit, if any, so Ctrl-C can interrupt the callable itself:
/// Python raises KeyboardInterrupt only on the main thread, and the fit
/// calls back from its own thread.
#[derive(Clone, Default)]
pub struct PythonCaller(Arc<AtomicU64>);

impl PythonCaller {
    /// Runs `call` (which holds the GIL) as the interruptible callable.
    /// The slot is written and cleared under the GIL, so a reader holding
    /// the GIL sees a thread that is inside `call` or none.
    pub fn call<R>(&self, _py: Python<'_>, call: impl FnOnce() -> R) -> R {
        // SAFETY: a plain read of the calling thread's identifier.
        let id = unsafe { ffi::PyThread_get_thread_ident() };
        self.0.store(id as u64, Ordering::SeqCst);
        let r = call();
        self.0.store(0, Ordering::SeqCst);
        r
    }

    /// Raises KeyboardInterrupt in the running callable at its next Python
    /// instruction (a callable blocked in C code, such as `time.sleep`, sees
    /// it when it returns); true if one was running.
    fn interrupt(&self, _py: Python<'_>) -> bool {
        let id = self.0.load(Ordering::SeqCst);
        if id == 0 {
            return false;
        }
        // SAFETY: the GIL is held (`_py`), as the call requires; the thread
        // is inside `call`, so its thread state exists.
        unsafe {
            ffi::PyThreadState_SetAsyncExc(id as std::ffi::c_long, ffi::PyExc_KeyboardInterrupt) > 0
        }
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
    run_interruptible_calling(py, &PythonCaller::default(), f)
}

/// `run_interruptible` for a call that runs Python callables through
/// `caller`: after Ctrl-C the running callable is interrupted too.
pub fn run_interruptible_calling<R: Send>(
    py: Python<'_>,
    caller: &PythonCaller,
    f: impl FnOnce(Cancel) -> Result<R, RgbmError> + Send,
) -> PyResult<R> {
    run_interruptible_watching(py, caller, None, f)
}

/// `interrupt.is_set()` (a `threading.Event`, say) is true: the caller
/// asked this call to stop, as Ctrl-C would. Signals reach the main thread
/// only, so a call on another thread is stopped this way.
fn interrupt_requested(py: Python<'_>, interrupt: &Py<PyAny>) -> bool {
    interrupt
        .bind(py)
        .call_method0("is_set")
        .and_then(|v| v.is_truthy())
        .unwrap_or(false)
}

/// `run_interruptible_calling` that also stops, with KeyboardInterrupt,
/// once `interrupt.is_set()` is true.
pub fn run_interruptible_watching<R: Send>(
    py: Python<'_>,
    caller: &PythonCaller,
    interrupt: Option<&Py<PyAny>>,
    f: impl FnOnce(Cancel) -> Result<R, RgbmError> + Send,
) -> PyResult<R> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut signal: Option<PyErr> = None;
    let mut callable_interrupted = false;
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
                    Err(mpsc::RecvTimeoutError::Timeout) => Python::attach(|py| {
                        if signal.is_none()
                            && let Err(e) = py.check_signals()
                        {
                            signal = Some(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                        if signal.is_none()
                            && let Some(interrupt) = interrupt
                            && interrupt_requested(py, interrupt)
                        {
                            signal = Some(PyKeyboardInterrupt::new_err("interrupted"));
                            stop.store(true, Ordering::Relaxed);
                        }
                        if signal.is_some() && !callable_interrupted {
                            callable_interrupted = caller.interrupt(py);
                        }
                    }),
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

//! RgbmError -> Python exceptions, and running core calls without the GIL.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
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
        RgbmError::Threads(_) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// A Python call the fit's thread asks the calling thread to run.
type Job = Box<dyn FnOnce(Python<'_>) + Send>;

/// What the fit's thread sends the thread that started the call.
enum ToCaller {
    Run(Job),
    Done,
}

/// Runs a fit's Python callables (custom loss, metric, callback) on the
/// thread that called the fit. Python raises KeyboardInterrupt on the main
/// thread only, so there Ctrl-C interrupts a callable that blocks in C
/// (`time.sleep`, a socket, a lock) as it would in plain Python; the
/// core's parallel work stays on its own threads.
#[derive(Clone, Default)]
pub struct PythonCaller(Arc<Mutex<Option<mpsc::Sender<ToCaller>>>>);

impl PythonCaller {
    /// Runs `call` on the calling thread of the watched call in progress
    /// and waits for its result (here, with the GIL, outside one).
    /// Interrupted if that thread can no longer run it.
    pub fn call<R: Send + 'static>(
        &self,
        call: impl FnOnce(Python<'_>) -> R + Send + 'static,
    ) -> Result<R, RgbmError> {
        let runner = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(runner) = runner else {
            return Ok(Python::attach(call));
        };
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |py| {
            let _ = tx.send(call(py));
        });
        runner
            .send(ToCaller::Run(job))
            .map_err(|_| RgbmError::Interrupted)?;
        rx.recv().map_err(|_| RgbmError::Interrupted)
    }

    fn install(&self, runner: Option<mpsc::Sender<ToCaller>>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = runner;
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
    run_interruptible_watching(py, &PythonCaller::default(), None, f)
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

/// `run_interruptible` that runs the Python callables of `caller` on this
/// thread, and also stops, with KeyboardInterrupt, once
/// `interrupt.is_set()` is true.
pub fn run_interruptible_watching<R: Send>(
    py: Python<'_>,
    caller: &PythonCaller,
    interrupt: Option<&Py<PyAny>>,
    f: impl FnOnce(Cancel) -> Result<R, RgbmError> + Send,
) -> PyResult<R> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut signal: Option<PyErr> = None;
    let (tx, rx) = mpsc::channel::<ToCaller>();
    caller.install(Some(tx.clone()));
    let outcome = py.detach(|| {
        let rx = rx; // moved in: a Receiver cannot be shared
        std::thread::scope(|s| {
            let cancel = Cancel::on(stop.clone());
            let worker = s.spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(cancel)));
                let _ = tx.send(ToCaller::Done);
                r
            });
            loop {
                let job = match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(ToCaller::Done) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    Ok(ToCaller::Run(job)) => Some(job),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                };
                Python::attach(|py| {
                    if let Some(job) = job {
                        // A panic drops the job's reply: the fit's thread
                        // sees Interrupted and ends.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(py)));
                    }
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
                })
            }
            worker.join().unwrap_or_else(Err)
        })
    });
    caller.install(None);
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

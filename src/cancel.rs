//! Cooperative cancellation: long phases (binning, tree growth, prediction)
//! poll a flag that the Python layer sets on Ctrl-C, and stop with
//! `RgbmError::Interrupted`. Polling is a relaxed load, cheap enough to do
//! once per block of rows or per tree node.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Result, RgbmError};

/// A cancellation flag, or none (the phase always runs to the end).
#[derive(Clone, Debug, Default)]
pub struct Cancel(Option<Arc<AtomicBool>>);

impl Cancel {
    /// Never cancelled.
    pub fn never() -> Cancel {
        Cancel(None)
    }

    /// Cancelled once `flag` is set.
    pub fn on(flag: Arc<AtomicBool>) -> Cancel {
        Cancel(Some(flag))
    }

    pub fn is_set(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// `Err(Interrupted)` once cancelled.
    pub fn check(&self) -> Result<()> {
        if self.is_set() {
            Err(RgbmError::Interrupted)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_flag_interrupts_and_never_does_not() {
        let flag = Arc::new(AtomicBool::new(false));
        let cancel = Cancel::on(flag.clone());
        assert!(cancel.check().is_ok());
        flag.store(true, Ordering::Relaxed);
        assert_eq!(cancel.check(), Err(RgbmError::Interrupted));
        assert!(cancel.clone().is_set());
        assert!(Cancel::never().check().is_ok());
    }
}

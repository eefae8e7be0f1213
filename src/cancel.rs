//! Cancellation of work that runs before any job exists to cancel (an SRS load reads tens of
//! gigabytes): a flag the caller sets from another thread and the work reads between chunks.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Result;

/// Set once, never cleared; the work it is given to stops at its next check with
/// `CUZK_STATUS_CANCELLED`.
#[derive(Debug, Default)]
pub struct CancelToken(AtomicBool);

/// The token of calls that offer no cancellation. Nothing sets it: `cancel` is only called on
/// tokens a caller created.
static NEVER: CancelToken = CancelToken(AtomicBool::new(false));

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// A token that is never cancelled.
    pub fn never() -> &'static CancelToken {
        &NEVER
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// `Err(Cancelled)` naming `what` once the token is cancelled.
    pub fn check(&self, what: impl FnOnce() -> String) -> Result<()> {
        if self.is_cancelled() {
            return Err(err!(Cancelled, "{} was cancelled", what()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_token_stays_cancelled_and_never_is_not() {
        let t = CancelToken::new();
        assert!(t.check(|| "x".into()).is_ok());
        t.cancel();
        let e = t.check(|| "the SRS load of p".into()).unwrap_err();
        assert_eq!(e.status, crate::error::Status::Cancelled);
        assert!(e.message.contains("the SRS load of p was cancelled"), "{}", e.message);
        assert!(!CancelToken::never().is_cancelled());
    }
}

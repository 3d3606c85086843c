//! Ctrl-C (SIGINT) and SIGTERM: a run stops between two packets and ends as it ends at
//! the end of its input (flows drained, every alert written as whole lines, the summary
//! printed), then exits with 128 + the signal's number. A second signal ends the
//! process at once, for a run stuck past the first.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// Whether a stop was asked for, and by which signal.
pub struct Interrupt {
    signal: Arc<AtomicUsize>,
}

impl Interrupt {
    /// Installs the handlers. Without them (a platform that refuses) the run simply
    /// cannot be interrupted cleanly.
    pub fn install() -> Interrupt {
        let signal = Arc::new(AtomicUsize::new(0));
        let armed = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM] {
            // The shutdown goes first, so it sees the flag as the previous signal left it.
            let _ = flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&armed));
            let _ = flag::register(sig, Arc::clone(&armed));
            let _ = flag::register_usize(sig, Arc::clone(&signal), sig as usize);
        }
        Interrupt { signal }
    }

    /// A stop was asked for.
    pub fn requested(&self) -> bool {
        self.signal.load(Ordering::SeqCst) != 0
    }

    /// The exit code of an interrupted run (128 + the signal), if it was.
    pub fn exit_code(&self) -> Option<ExitCode> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(ExitCode::from(128 + s as u8)),
        }
    }
}

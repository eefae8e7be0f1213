//! Terminal progress bars for the binaries (indicatif). Hidden when stderr is not a terminal
//! (CI logs, the GPU machine): the library's log lines ([`super::Progress`],
//! [`super::Heartbeat`]) and the binaries' own summaries say the same there.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `len` steps (runs, jobs) with elapsed time and an estimate of what is left.
pub fn steps(len: u64, what: &str) -> ProgressBar {
    let b = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed}, ~{eta} left)") {
        b.set_style(style.progress_chars("=> "));
    }
    b.set_message(what.to_owned());
    b
}

/// A spinner with elapsed time for work of unknown length.
pub fn spinner(what: &str) -> ProgressBar {
    let b = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]") {
        b.set_style(style);
    }
    b.set_message(what.to_owned());
    b.enable_steady_tick(Duration::from_millis(250));
    b
}

/// Shows that opaque work is alive until dropped: a spinner on a terminal, else (CI logs, the
/// GPU machine) a log line every 30 s.
pub enum Activity {
    Spinner(ProgressBar),
    Heartbeat(super::Heartbeat),
}

pub fn activity(what: &str, hint: &str) -> Activity {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        Activity::Spinner(spinner(&format!("{what}{hint}")))
    } else {
        Activity::Heartbeat(super::Heartbeat::start(what, hint, Duration::from_secs(30)))
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Activity::Spinner(b) = self {
            b.finish_and_clear();
        }
    }
}

//! Where merged alerts and flow records go: thresholds first for alerts (they count
//! across flows, so across workers), then every sink (eve.json, fast.log) in turn.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use netsieve_detect::{Alert, RuleSet, Thresholds};
use netsieve_rules::ThresholdConfig;

use super::eve::{DropRecord, FlowRecord};

/// An output of alerts and records.
pub(super) trait Sink {
    fn alert(&mut self, set: &RuleSet, al: &Alert) -> io::Result<()>;
    /// A flow ended (sinks without flow records ignore it).
    fn flow(&mut self, _rec: &FlowRecord) -> io::Result<()> {
        Ok(())
    }
    /// A packet was dropped (sinks without drop records ignore it).
    fn dropped(&mut self, _set: &RuleSet, _rec: &DropRecord) -> io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()>;
}

/// Applies thresholds to the alerts, in packet order, and hands those admitted to the
/// sinks.
pub(super) struct Emitter {
    set: Arc<RuleSet>,
    thresholds: Thresholds,
    sinks: Vec<Box<dyn Sink>>,
    alerts: u64,
}

impl Emitter {
    pub fn new(set: Arc<RuleSet>, thresholds: Thresholds, sinks: Vec<Box<dyn Sink>>) -> Emitter {
        Emitter {
            set,
            thresholds,
            sinks,
            alerts: 0,
        }
    }

    pub fn emit(&mut self, al: &Alert) -> Result<(), String> {
        let mut al = al.clone();
        if !self.thresholds.admit(&self.set, &mut al) {
            return Ok(());
        }
        self.alerts += 1;
        for s in &mut self.sinks {
            s.alert(&self.set, &al).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    pub fn flow(&mut self, rec: &FlowRecord) -> Result<(), String> {
        for s in &mut self.sinks {
            s.flow(rec).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    pub fn dropped(&mut self, rec: &DropRecord) -> Result<(), String> {
        for s in &mut self.sinks {
            s.dropped(&self.set, rec).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Names alerts' rules from `set` from now on; threshold counters carry over by
    /// (gid, sid).
    pub fn reload(&mut self, set: Arc<RuleSet>, config: Option<&ThresholdConfig>) {
        self.thresholds.rebase(&self.set, &set, config);
        self.set = set;
    }

    /// The rules alerts are named from.
    pub fn rules(&self) -> &Arc<RuleSet> {
        &self.set
    }

    /// Alerts written so far.
    pub fn alerts(&self) -> u64 {
        self.alerts
    }

    /// Writes out what the sinks hold (a live run does so whenever traffic pauses, so
    /// that an alert reaches its file within moments).
    pub fn flush(&mut self) -> Result<(), String> {
        for s in &mut self.sinks {
            s.flush().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Flushes every sink; returns the alerts written.
    pub fn finish(mut self) -> Result<u64, String> {
        self.flush()?;
        Ok(self.alerts)
    }
}

/// An output file whose errors name it (a full disk says which file it stopped).
pub(super) struct Output {
    name: String,
    w: BufWriter<File>,
}

impl Output {
    /// Creates (or empties) `path`.
    pub fn create(path: &Path) -> Result<Output, String> {
        File::create(path)
            .map(|f| Output {
                name: path.display().to_string(),
                w: BufWriter::with_capacity(1 << 16, f),
            })
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    fn named(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: {e}", self.name))
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush().map_err(|e| self.named(e))
    }
}

//! Where merged alerts and records go: thresholds first for alerts (they count across
//! flows, so across workers), then, on a writer thread, every sink (eve.json, fast.log)
//! in turn.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, mpsc};

use netsieve_detect::log::Logged;
use netsieve_detect::{Alert, RuleSet, Thresholds};
use netsieve_rules::ThresholdConfig;

use super::eve::Record;

/// An output of alerts and records.
pub(super) trait Sink {
    fn alert(&mut self, set: &RuleSet, al: &Alert) -> io::Result<()>;
    /// A flow ended (sinks without flow records ignore it).
    /// A record other than an alert (flow, drop, transaction, file, stats); `set` is
    /// the rule set in force, which names the rules a record names.
    fn record(&mut self, _set: &RuleSet, _rec: &Record) -> io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()>;
    /// Packets from `first_packet` on come from capture file `name` (for sinks that
    /// name it).
    fn file(&mut self, _first_packet: u64, _name: &str) {}
}

/// Applies thresholds to the alerts, in packet order, and hands those admitted and the
/// records to the sinks, which run on a thread of their own ([`Writer`]): serializing
/// and writing records is off the packet path.
pub(super) struct Emitter {
    set: Arc<RuleSet>,
    thresholds: Thresholds,
    writer: Writer,
    alerts: u64,
    /// Files stored so far (each stored file's record is numbered here, in the order
    /// records are written, as Suricata numbers them).
    stored: u64,
}

impl Emitter {
    pub fn new(
        set: Arc<RuleSet>,
        thresholds: Thresholds,
        sinks: Vec<Box<dyn Sink + Send>>,
    ) -> Emitter {
        Emitter {
            set,
            thresholds,
            writer: Writer::start(sinks),
            alerts: 0,
            stored: 0,
        }
    }

    pub fn emit(&mut self, al: &Alert) -> Result<(), String> {
        let mut al = al.clone();
        if !self.thresholds.admit(&self.set, &mut al) {
            return Ok(());
        }
        self.alerts += 1;
        self.writer.put(Job::Alert(Arc::clone(&self.set), al))
    }

    pub fn record(&mut self, mut rec: Record) -> Result<(), String> {
        if let Record::Tx(t) = &mut rec
            && let Logged::File(f, _) = &mut t.record
            && f.stored.is_some()
        {
            self.stored += 1;
            f.file_id = Some(self.stored);
        }
        self.writer.put(Job::Record(Arc::clone(&self.set), rec))
    }

    /// Packets from `first_packet` on come from capture file `name`.
    pub fn file(&mut self, first_packet: u64, name: &str) -> Result<(), String> {
        self.writer.put(Job::File(first_packet, name.into()))
    }

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

    /// Writes out everything handed over so far (a live run does so whenever traffic
    /// pauses, so that an alert reaches its file within moments).
    pub fn flush(&mut self) -> Result<(), String> {
        self.writer.flush()
    }

    /// Writes out everything and stops the writer; returns the alerts written.
    pub fn finish(mut self) -> Result<u64, String> {
        self.writer.flush()?;
        self.writer.stop()?;
        Ok(self.alerts)
    }
}

/// What the writer thread is given to do, in order.
enum Job {
    Alert(Arc<RuleSet>, Alert),
    Record(Arc<RuleSet>, Record),
    /// Packets from this number on come from this capture file.
    File(u64, Arc<str>),
    /// Write out what the sinks hold and answer how that went.
    Flush(mpsc::SyncSender<Result<(), String>>),
}

/// The sinks on a thread of their own, fed jobs in batches. The first write error ends
/// the thread; the next call that hands it something reports the error.
struct Writer {
    batch: Vec<Job>,
    tx: Option<mpsc::SyncSender<Vec<Job>>>,
    handle: Option<std::thread::JoinHandle<Result<(), String>>>,
}

/// Jobs per batch handed to the writer thread.
const BATCH: usize = 256;

impl Writer {
    fn start(mut sinks: Vec<Box<dyn Sink + Send>>) -> Writer {
        let (tx, rx) = mpsc::sync_channel::<Vec<Job>>(8);
        let thread = std::thread::Builder::new().name("writer".into());
        let handle = thread
            .spawn(move || {
                for batch in rx {
                    for job in batch {
                        Writer::run(&mut sinks, job)?;
                    }
                }
                Ok(())
            })
            .expect("the system could not start a thread");
        Writer {
            batch: Vec::with_capacity(BATCH),
            tx: Some(tx),
            handle: Some(handle),
        }
    }

    /// Does one job on the writer thread.
    fn run(sinks: &mut [Box<dyn Sink + Send>], job: Job) -> Result<(), String> {
        let each = |sinks: &mut [Box<dyn Sink + Send>],
                    f: &dyn Fn(&mut Box<dyn Sink + Send>) -> io::Result<()>| {
            sinks.iter_mut().try_for_each(f).map_err(|e| e.to_string())
        };
        match job {
            Job::Alert(set, al) => each(sinks, &|s| s.alert(&set, &al)),
            Job::Record(set, rec) => each(sinks, &|s| s.record(&set, &rec)),
            Job::File(first, name) => {
                sinks.iter_mut().for_each(|s| s.file(first, &name));
                Ok(())
            }
            Job::Flush(answer) => {
                let r = each(sinks, &|s| s.flush());
                let _ = answer.send(r.clone());
                r
            }
        }
    }

    fn put(&mut self, job: Job) -> Result<(), String> {
        self.batch.push(job);
        if self.batch.len() >= BATCH {
            self.send()?;
        }
        Ok(())
    }

    /// Hands the batch over; the writer's error if it stopped.
    fn send(&mut self) -> Result<(), String> {
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(batch).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self
                .stop()
                .err()
                .unwrap_or_else(|| "the output writer stopped".into()))
        }
    }

    /// Waits until everything handed over is written out.
    fn flush(&mut self) -> Result<(), String> {
        let (answer, done) = mpsc::sync_channel(1);
        self.batch.push(Job::Flush(answer));
        self.send()?;
        match done.recv() {
            Ok(r) => r,
            Err(_) => Err(self
                .stop()
                .err()
                .unwrap_or_else(|| "the output writer stopped".into())),
        }
    }

    /// Ends the thread; its error, if it had one.
    fn stop(&mut self) -> Result<(), String> {
        self.tx = None;
        match self.handle.take().map(std::thread::JoinHandle::join) {
            None => Ok(()),
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the output writer panicked".into()),
        }
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

    /// `BufWriter`'s own, which copies a piece that fits in one step: serializers write
    /// a record a token at a time, and the default loop over `write` took a seventh of
    /// the writer thread's time.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.w.write_all(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush().map_err(|e| self.named(e))
    }
}

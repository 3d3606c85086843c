//! `file-store` (version 2), as Suricata writes it: each file a record marks as stored
//! goes to `DIR/xx/SHA256`, named by its SHA-256 (`xx`: the first two hex digits), once
//! (a file seen again only has its time touched, as Suricata does); with
//! `write-fileinfo`, its `fileinfo` record goes beside it as `SHA256.SECONDS.N.json`.
//!
//! A sink on the writer thread, so files are written off the packet path. A file that
//! cannot be written is reported on standard error; the run goes on (Suricata counts
//! them as `file_store.fs_errors`).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use netsieve_detect::digest::Hash;
use netsieve_detect::log::{FileMeta, Logged, TxLog};
use netsieve_detect::{Alert, RuleSet};

use super::eve::{self, Record};
use super::settings::EveOptions;
use super::sink::Sink;

/// Errors reported on standard error at most.
const ERRORS_SHOWN: u64 = 10;

pub(super) struct FileStore {
    dir: PathBuf,
    /// Each stored file's `fileinfo` record is written beside it, as eve.json's
    /// (`opts`) would be.
    fileinfo: bool,
    opts: EveOptions,
    /// Files that could not be written.
    errors: u64,
}

impl FileStore {
    pub fn new(dir: PathBuf, fileinfo: bool, opts: EveOptions) -> FileStore {
        FileStore {
            dir,
            fileinfo,
            opts,
            errors: 0,
        }
    }

    /// Stores file `data` of record `t`; its `fileinfo` record too, when asked.
    fn store(&mut self, set: &RuleSet, t: &TxLog, f: &FileMeta, data: &[u8]) -> io::Result<()> {
        let sha256 = sha256(f, data);
        let sub = self.dir.join(&sha256[..2]);
        fs::create_dir_all(&sub)?;
        write_once(&sub.join(&sha256), data)?;
        if self.fileinfo {
            let (secs, id) = (t.ts.as_secs(), f.file_id.unwrap_or(0));
            let name = format!("{sha256}.{secs}.{id}.json");
            let mut out = io::BufWriter::new(fs::File::create(sub.join(name))?);
            eve::write_tx(&mut out, set, t, &self.opts)?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
        Ok(())
    }
}

/// The SHA-256 of file `f`, whose bytes are `data`, in hex (its record has it, as
/// `file-store` asks for it).
fn sha256(f: &FileMeta, data: &[u8]) -> String {
    match &f.hashes.sha256 {
        Some(h) => h.clone(),
        None => Hash::Sha256.hex(data),
    }
}

/// Writes `data` to `path` unless a file is there already (the same bytes: the name is
/// their digest), whose time is then touched. Written under a temporary name first, so
/// that a file under its final name is always whole.
fn write_once(path: &Path, data: &[u8]) -> io::Result<()> {
    if path.exists() {
        return fs::File::options()
            .append(true)
            .open(path)?
            .set_modified(SystemTime::now());
    }
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, data)?;
    fs::rename(&tmp, path)
}

impl Sink for FileStore {
    fn alert(&mut self, _set: &RuleSet, _al: &Alert) -> io::Result<()> {
        Ok(())
    }

    fn record(&mut self, set: &RuleSet, rec: &Record) -> io::Result<()> {
        let Record::Tx(t) = rec else { return Ok(()) };
        let Logged::File(f, _) = &t.record else {
            return Ok(());
        };
        let Some(data) = &f.stored else { return Ok(()) };
        if let Err(e) = self.store(set, t, f, data) {
            self.errors += 1;
            let sha256 = sha256(f, data);
            let at = self.dir.join(&sha256[..2]).join(&sha256);
            match self.errors {
                1..ERRORS_SHOWN => eprintln!("netsieve scan: file-store: {}: {e}", at.display()),
                ERRORS_SHOWN => eprintln!(
                    "netsieve scan: file-store: {}: {e} (further errors not shown)",
                    at.display()
                ),
                _ => {}
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

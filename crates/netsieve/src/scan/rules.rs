//! The rules of a run: read from the rule files with the classification and threshold
//! files, and read again on a reload, with the rules added and removed through the
//! control socket since the start.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use netsieve_detect::{BuildOptions, RuleSet};
use netsieve_rules::{Classifications, Loaded, ThresholdConfig, Vars};

use super::settings::Settings;

/// Everything a (re)load reads.
#[derive(Clone)]
pub(super) struct RuleSource {
    files: Vec<PathBuf>,
    vars: Vars,
    classification: Option<PathBuf>,
    threshold_file: Option<PathBuf>,
    build: BuildOptions,
}

/// Rules changed through the control socket, on top of the files: they last until the
/// run ends, across reloads.
#[derive(Clone, Debug, Default)]
pub(super) struct Edits {
    /// Rule texts added (`add-rule`), in order.
    pub added: Vec<String>,
    /// Signature ids removed (`remove-rule`), from the files and from `added`.
    pub removed: BTreeSet<u32>,
}

/// The rules, built, and what loading them counted.
pub(super) struct Rules {
    pub set: Arc<RuleSet>,
    pub thresholds: Option<ThresholdConfig>,
    pub parsed: usize,
    pub failed: usize,
    /// What was skipped, one message each: the rules (with file, line and column) and
    /// the threshold entries.
    pub errors: Vec<String>,
}

/// Where rules added through the control socket are said to come from.
pub(super) const SOCKET: &str = "<unix-socket>";

impl RuleSource {
    pub fn new(files: &[PathBuf], settings: &Settings) -> RuleSource {
        RuleSource {
            files: files.to_vec(),
            vars: settings.vars.clone(),
            classification: settings.classification.clone(),
            threshold_file: settings.threshold_file.clone(),
            build: settings.build,
        }
    }

    /// Reads the rule files (a bad rule is skipped and reported in `errors`), applies
    /// `edits`, reads the classification and threshold files, and builds the rule set.
    pub fn load(&self, edits: &Edits) -> Result<Rules, String> {
        let mut loaded = Loaded::default();
        for f in &self.files {
            loaded.add_file(f, &self.vars)?;
        }
        for text in &edits.added {
            loaded.add_text(SOCKET, text, &self.vars);
        }
        loaded.dedup();
        loaded.rules.retain(|r| !edits.removed.contains(&r.sid));
        let mut errors: Vec<String> = loaded
            .errors
            .iter()
            .map(|e| format!("rule skipped: {e}"))
            .collect();
        let parsed = loaded.rules.len();
        let failed = loaded.errors.len();
        if parsed == 0 && failed > 0 {
            return Err(format!("all {failed} rules failed to load"));
        }
        let classes = match &self.classification {
            Some(p) if p.exists() => Classifications::parse(
                &std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
            ),
            _ => Classifications::bundled(),
        };
        let set = RuleSet::build(loaded.rules, &classes, self.build);
        errors.extend(
            set.stats()
                .compile_errors
                .iter()
                .map(|(_, e)| format!("rule skipped: {e}")),
        );
        let thresholds = match &self.threshold_file {
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
                let c = ThresholdConfig::parse(&text, &self.vars);
                errors.extend(
                    c.errors
                        .iter()
                        .map(|e| format!("threshold entry skipped: {}:{e}", p.display())),
                );
                Some(c)
            }
            None => None,
        };
        Ok(Rules {
            set: Arc::new(set),
            thresholds,
            parsed,
            failed,
            errors,
        })
    }
}

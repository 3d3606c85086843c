//! The rules of a run: read from the rule files with the classification and threshold
//! files, and read again on a reload, with the rules added and removed through the
//! control socket since the start.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use netsieve_detect::{BuildOptions, RuleSet};
use netsieve_rules::{Classifications, Loaded, ThresholdConfig, Vars, parse_rule};

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
    /// Rule texts added (`add-rule`), in order, with their sid where they parse.
    added: Vec<(Option<u32>, String)>,
    /// Signature ids removed from the files (`remove-rule`).
    removed: BTreeSet<u32>,
}

impl Edits {
    /// Adds a rule (a rule that does not parse is kept, to be reported by each load as
    /// a rule from the files would be).
    pub fn add(&mut self, source: &RuleSource, text: &str) {
        let sid = parse_rule(text, &source.vars).ok().map(|r| r.sid);
        self.added.push((sid, text.to_string()));
    }

    /// Removes the rules with `sid`: those added, and those of the files. A rule added
    /// later with that sid is not removed.
    pub fn remove(&mut self, sid: u32) {
        self.added.retain(|(s, _)| *s != Some(sid));
        self.removed.insert(sid);
    }
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
        loaded.rules.retain(|r| !edits.removed.contains(&r.sid));
        for (_, text) in &edits.added {
            loaded.add_text(SOCKET, text, &self.vars);
        }
        loaded.dedup();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(rules: &Rules) -> Vec<(u32, String)> {
        let mut v: Vec<(u32, String)> = rules
            .set
            .sigs()
            .iter()
            .map(|s| (s.rule.sid, s.rule.msg.clone()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn edits_add_and_remove_rules_over_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.rules");
        std::fs::write(
            &file,
            "alert udp any any -> any any (msg:\"one\"; content:\"a\"; sid:1;)\n\
             alert udp any any -> any any (msg:\"two\"; content:\"b\"; sid:2;)\n",
        )
        .unwrap();
        let settings = Settings::load(None, &[]).unwrap();
        let source = RuleSource::new(&[file], &settings);
        let rule = |sid: u32, msg: &str| {
            format!("alert udp any any -> any any (msg:\"{msg}\"; content:\"c\"; sid:{sid};)")
        };
        let mut e = Edits::default();
        // A file's rule removed, then a rule with its sid added: the added one stands.
        e.remove(1);
        e.add(&source, &rule(1, "new one"));
        // A rule added then removed is gone; the sid of a rule written as `sid: 30`
        // is read, not matched as text.
        e.add(&source, &rule(3, "three").replace("sid:3", "sid: 30"));
        e.remove(30);
        let got = msgs(&source.load(&e).unwrap());
        assert_eq!(got, [(1, "new one".into()), (2, "two".into())]);
        // A rule added that does not parse is reported, the others load.
        e.add(&source, "alert udp any any -> (sid:4;)");
        let r = source.load(&e).unwrap();
        assert_eq!(r.set.sigs().len(), 2);
        assert!(
            r.errors.iter().any(|m| m.contains(SOCKET)),
            "{:?}",
            r.errors
        );
    }
}

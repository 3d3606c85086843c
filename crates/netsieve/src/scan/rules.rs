//! The rules of a run: read from the rule files with the classification and threshold
//! files, and read again on a reload, with the rules added and removed through the
//! control socket since the start.
//!
//! A reload keeps what the set in force compiled ([`RuleSet::rebuild`]); a rule added or
//! removed through the socket changes the set in force without reading the files
//! ([`RuleSet::edit`]), and is remembered in [`Edits`] for the reloads after it.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use netsieve_detect::{BuildOptions, RuleSet};
use netsieve_rules::{Action, Classifications, Loaded, ThresholdConfig, Vars, parse_rule};

use super::settings::Settings;

/// Everything a (re)load reads.
#[derive(Clone)]
pub(super) struct RuleSource {
    files: Vec<PathBuf>,
    /// Firewall rule files (`--firewall-rules-exclusive`), read before `files`.
    firewall: Vec<PathBuf>,
    vars: Vars,
    classification: Option<PathBuf>,
    threshold_file: Option<PathBuf>,
    build: BuildOptions,
    /// Rules keep their texts (alerts write them: `metadata.rule.raw`).
    keep_texts: bool,
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
    /// Adds a rule (one that does not parse is kept, to be reported by each load as a
    /// rule from the files would be).
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
#[derive(Clone)]
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
            firewall: Vec::new(),
            vars: settings.vars.clone(),
            classification: settings.classification.clone(),
            threshold_file: settings.threshold_file.clone(),
            build: settings.build,
            keep_texts: settings.eve.alert_meta.raw,
        }
    }

    /// The same, with firewall rule files read first.
    pub fn with_firewall(self, firewall: &[PathBuf]) -> RuleSource {
        RuleSource {
            firewall: firewall.to_vec(),
            ..self
        }
    }

    /// Reads the rule files (a bad rule is skipped and reported in `errors`), applies
    /// `edits`, reads the classification and threshold files, and builds the rule set,
    /// keeping what `prev` (the set in force) compiled of the same rules.
    pub fn load(&self, edits: &Edits, prev: Option<&RuleSet>) -> Result<Rules, String> {
        let classes = match &self.classification {
            Some(p) if p.exists() => Classifications::parse(
                &std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
            ),
            _ => Classifications::bundled(),
        };
        // The rules `prev` holds are not parsed again.
        let mut loaded = prev.map_or_else(Loaded::default, |p| {
            Loaded::knowing(p.known_texts(&classes))
        });
        if self.keep_texts {
            loaded.keep_texts();
        }
        // A firewall file is one named as such, or one with an `accept` rule (an action
        // only firewall rules have): its rules go to the firewall's tables.
        for (f, named) in self
            .firewall
            .iter()
            .map(|f| (f, true))
            .chain(self.files.iter().map(|f| (f, false)))
        {
            let start = loaded.rules.len();
            loaded.add_file(f, &self.vars)?;
            let read = &mut loaded.rules[start..];
            if named || read.iter().any(|r| r.action == Action::Accept) {
                read.iter_mut().for_each(|r| r.firewall = true);
            }
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
        let set = match prev {
            Some(p) => p.rebuild(loaded.rules, &classes, self.build),
            None => RuleSet::build(loaded.rules, &classes, self.build),
        };
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

    /// Every rule read failed: a run goes on without rules as Suricata's does, a reload
    /// keeps the rules in force.
    pub fn none_loaded(rules: &Rules) -> Option<String> {
        (rules.parsed == 0 && rules.failed > 0)
            .then(|| format!("all {} rules failed to load", rules.failed))
    }

    /// The rules in force (`last`) with the rules of `remove` taken out and the rule
    /// `add` put in, without reading the files. A rule that does not parse, or whose
    /// signature id is in force already, is an error and changes nothing.
    pub fn edit(
        &self,
        last: &Rules,
        remove: Option<u32>,
        add: Option<&str>,
    ) -> Result<Rules, String> {
        let mut loaded = Loaded::default();
        if let Some(text) = add {
            loaded.add_text(SOCKET, text, &self.vars);
        }
        if let Some(e) = loaded.errors.first() {
            return Err(format!("rule not added: {e}"));
        }
        let gone = |sid: u32| remove == Some(sid);
        for r in &loaded.rules {
            if last
                .set
                .in_force()
                .any(|s| (s.rule.gid, s.rule.sid) == (r.gid, r.sid) && !gone(s.rule.sid))
            {
                return Err(format!("rule not added: sid {} is loaded already", r.sid));
            }
        }
        let removed = remove.map_or(0, |sid| {
            last.set.in_force().filter(|s| s.rule.sid == sid).count()
        });
        let added = loaded.rules.len();
        let set = last.set.edit(remove.as_slice(), loaded.rules, self.build);
        let mut errors = last.errors.clone();
        errors.extend(
            set.stats()
                .compile_errors
                .iter()
                .skip(last.set.stats().compile_errors.len())
                .map(|(_, e)| format!("rule skipped: {e}")),
        );
        Ok(Rules {
            set: Arc::new(set),
            thresholds: last.thresholds.clone(),
            parsed: last.parsed - removed + added,
            failed: last.failed,
            errors,
        })
    }
}

/// `netsieve bench reload`: the rules of `files` loaded, then `rounds` times, each step
/// after the other: a full reload without keeping anything and keeping what the set in
/// force compiled, an alert rule added and removed, a pass rule added and removed.
/// Medians of the times; memory is measured live, where RSS is sampled from outside
/// (`scripts/live-reload.sh`).
#[cfg(feature = "bench")]
pub(crate) fn bench_reload(files: &[PathBuf], rounds: usize) -> Result<String, String> {
    let settings = Settings::load(None, &[])?;
    let source = RuleSource::new(files, &settings);
    let none = Edits::default();
    let t = std::time::Instant::now();
    let mut last = source.load(&none, None)?;
    let first = t.elapsed();
    let sid = 2_999_999_999;
    let rule = format!(
        "alert tcp any any -> any any (msg:\"netsieve bench reload\"; \
         content:\"netsieve-bench-reload\"; sid:{sid}; rev:1;)"
    );
    // A pass rule goes before every alert rule: the groups it is in are built again.
    let pass = rule
        .replace("alert", "pass")
        .replace(&sid.to_string(), &(sid + 1).to_string());
    let steps = [
        "full reload, nothing kept",
        "full reload, kept",
        "one alert rule added",
        "one rule removed",
        "one pass rule added",
        "one rule removed",
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); steps.len()];
    for _ in 0..rounds.max(1) {
        for (k, times) in times.iter_mut().enumerate() {
            let t = std::time::Instant::now();
            let next = match k {
                0 => source.load(&none, None)?,
                1 => source.load(&none, Some(&last.set))?,
                2 => source.edit(&last, None, Some(&rule))?,
                3 => source.edit(&last, Some(sid), None)?,
                4 => source.edit(&last, None, Some(&pass))?,
                _ => source.edit(&last, Some(sid + 1), None)?,
            };
            times.push(t.elapsed().as_secs_f64());
            // The old set goes as a switch lets it go: after the new one was built.
            last = next;
        }
    }
    let mut out = format!(
        "{} rules in the set; first load {:.3} s\n\n\
         | step | time (median of {}) |\n|---|---:|\n",
        last.set.stats().inspected,
        first.as_secs_f64(),
        rounds.max(1),
    );
    for (name, t) in steps.iter().zip(&mut times) {
        t.sort_by(f64::total_cmp);
        let t = t[t.len() / 2];
        let time = if t < 0.1 {
            format!("{:.1} ms", t * 1e3)
        } else {
            format!("{t:.3} s")
        };
        out += &format!("| {name} | {time} |\n");
    }
    Ok(out)
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
        let got = msgs(&source.load(&e, None).unwrap());
        assert_eq!(got, [(1, "new one".into()), (2, "two".into())]);
        // A rule added that does not parse is reported, the others load.
        e.add(&source, "alert udp any any -> (sid:4;)");
        let r = source.load(&e, None).unwrap();
        assert_eq!(r.set.sigs().len(), 2);
        assert!(
            r.errors.iter().any(|m| m.contains(SOCKET)),
            "{:?}",
            r.errors
        );
    }
}

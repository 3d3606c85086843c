//! Variables rules set and EVE's `metadata` object logs: a flow's flowbits, flowints,
//! flow variables (`pcre` captures into `flow:` targets) and entropy values, and a
//! packet's variables (`pkt:` targets).
//!
//! A `pcre`'s captures are pending while its rule is evaluated ([`Ctx`]'s `captured`)
//! and are kept only when the rule matches; an `entropy` value is kept whenever the
//! keyword is evaluated (measured on Suricata 8: entropy-03's rule does not match, and
//! its value is logged). Memory is bounded: at most [`MAX_VARS`] variables of a flow or
//! a packet, each value at most [`MAX_VALUE`] bytes.
//!
//! [`Ctx`]: crate::eval::Ctx

use std::sync::Arc;

use netsieve_rules::rule::VarScope;

/// Variables kept per flow or packet.
pub const MAX_VARS: usize = 64;
/// Bytes kept of a variable's value.
pub const MAX_VALUE: usize = 4096;

/// A value a capture group took, pending until its rule matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    pub scope: VarScope,
    pub name: Arc<str>,
    pub value: Vec<u8>,
}

/// Named values, the latest value of a name replacing the one before (in place).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Named<V> {
    items: Vec<(Arc<str>, V)>,
}

impl<V> Named<V> {
    pub fn set(&mut self, name: &Arc<str>, value: V) {
        if let Some(slot) = self.items.iter_mut().find(|(n, _)| n == name) {
            slot.1 = value;
        } else if self.items.len() < MAX_VARS {
            self.items.push((name.clone(), value));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.items.iter().map(|(n, v)| (&**n, v))
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }
}

/// What a flow keeps besides its flowbits and flowints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowVars {
    pub vars: Named<Vec<u8>>,
    /// `entropy` values, by the buffer they were taken of (`file_data`, `content`).
    pub entropy: Named<f64>,
}

impl FlowVars {
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty() && self.entropy.is_empty()
    }
}

/// EVE's `metadata` object of a record: the flow's variables when it was written, and
/// an alert's packet's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metadata {
    /// Flowbits set, by id into the rule set's names, in the order they were set.
    pub flowbits: Vec<u32>,
    /// Flowints set: (id, value).
    pub flowints: Vec<(u32, u64)>,
    pub flow: FlowVars,
    pub pktvars: Named<Vec<u8>>,
}

impl Metadata {
    /// The object of a flow's state and a packet's variables; `None` when empty.
    pub fn of(
        bits: &[u32],
        ints: &[(u32, u64)],
        flow: Option<&FlowVars>,
        pkt: Option<&Named<Vec<u8>>>,
    ) -> Option<Arc<Metadata>> {
        let empty = bits.is_empty()
            && ints.is_empty()
            && flow.is_none_or(FlowVars::is_empty)
            && pkt.is_none_or(Named::is_empty);
        (!empty).then(|| {
            Arc::new(Metadata {
                flowbits: bits.to_vec(),
                flowints: ints.to_vec(),
                flow: flow.cloned().unwrap_or_default(),
                pktvars: pkt.cloned().unwrap_or_default(),
            })
        })
    }
}

/// A captured value as kept: at most [`MAX_VALUE`] bytes.
pub fn kept(value: &[u8]) -> Vec<u8> {
    value[..value.len().min(MAX_VALUE)].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_its_place_and_its_latest_value_within_the_bound() {
        let mut n = Named::default();
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        n.set(&a, 1);
        n.set(&b, 2);
        n.set(&a, 3);
        assert_eq!(n.iter().collect::<Vec<_>>(), [("a", &3), ("b", &2)]);
        for i in 0..100 {
            n.set(&Arc::from(format!("v{i}")), i);
        }
        assert_eq!(n.iter().count(), MAX_VARS);
        assert_eq!(kept(&[0; 10_000]).len(), MAX_VALUE);
    }

    #[test]
    fn empty_state_has_no_metadata() {
        assert!(Metadata::of(&[], &[], None, None).is_none());
        assert!(Metadata::of(&[], &[], Some(&FlowVars::default()), None).is_none());
        let m = Metadata::of(&[3], &[], None, None).unwrap();
        assert_eq!(m.flowbits, [3]);
    }
}

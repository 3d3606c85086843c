//! A TCP direction's bytes held until they make whole messages: MQTT, SIP and DCE/RPC
//! read their streams through it. Each feed takes what is held with the new bytes after
//! it and gives back what it did not use; a direction given up is read no further.

use netsieve_wire::{Direction, PerDir};

#[derive(Clone, Debug, Default)]
pub struct Held {
    bytes: PerDir<Vec<u8>>,
    gave_up: PerDir<bool>,
}

impl Held {
    /// Direction `dir`'s held bytes followed by `new`; `None` once it was given up.
    pub fn take(&mut self, dir: Direction, new: &[u8]) -> Option<Vec<u8>> {
        if self.gave_up[dir] {
            return None;
        }
        let mut b = std::mem::take(&mut self.bytes[dir]);
        b.extend_from_slice(new);
        Some(b)
    }

    /// Holds what follows the first `used` bytes of `b` (taken by [`Held::take`]) for
    /// the next feed.
    pub fn keep(&mut self, dir: Direction, mut b: Vec<u8>, used: usize) {
        b.drain(..used.min(b.len()));
        self.bytes[dir] = b;
    }

    /// Reads direction `dir` no further, and drops what it held.
    pub fn give_up(&mut self, dir: Direction) {
        self.gave_up[dir] = true;
        self.bytes[dir] = Vec::new();
    }

    /// Reads direction `dir` again, from the next feed, if it was given up.
    pub fn resume(&mut self, dir: Direction) {
        self.gave_up[dir] = false;
    }

    /// The bytes direction `dir` holds.
    pub fn bytes(&self, dir: Direction) -> &[u8] {
        &self.bytes[dir]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_rest_until_given_up() {
        let mut h = Held::default();
        let d = Direction::ToServer;
        let b = h.take(d, b"abc").unwrap();
        h.keep(d, b, 1);
        assert_eq!(h.take(d, b"d").unwrap(), b"bcd");
        h.give_up(d);
        assert!(h.take(d, b"e").is_none());
        assert!(h.bytes(d).is_empty());
        assert_eq!(h.take(Direction::ToClient, b"x").unwrap(), b"x");
    }
}

//! A direction's bytes as lines, for the line protocols (SMTP, FTP): bytes arrive in
//! any split, a line may span calls, and a line longer than its limit is cut there
//! (handed over as it is, the rest of it dropped) so that memory stays bounded.

/// One direction's line being read.
#[derive(Clone, Debug, Default)]
pub struct Lines {
    line: Vec<u8>,
    /// The rest of a line cut at its limit is being skipped.
    cut: bool,
    /// The line handed over last lost bytes (beyond its line end) to the limit.
    truncated: bool,
    /// [`Lines::next_piece`]: the piece handed over last stopped at the limit, and the
    /// next one continues its line.
    continuing: bool,
}

impl Lines {
    /// As [`Lines::next`], but a line longer than `max` is handed over in pieces of at
    /// most `max` bytes, none dropped (a message's data, where every byte counts): each
    /// piece with whether it continues the line of the piece before it.
    pub fn next_piece(&mut self, rest: &mut &[u8], max: usize) -> Option<(Vec<u8>, bool)> {
        while !rest.is_empty() {
            let room = max.saturating_sub(self.line.len()).max(1);
            let (take, eol) = match rest.iter().take(room).position(|&c| c == b'\n') {
                Some(i) => (i + 1, true),
                None => (rest.len().min(room), false),
            };
            self.line.extend_from_slice(&rest[..take]);
            *rest = &rest[take..];
            if eol || self.line.len() >= max {
                let continues = std::mem::replace(&mut self.continuing, !eol);
                return Some((std::mem::take(&mut self.line), continues));
            }
        }
        None
    }

    /// The end of the bytes: the line held without its end (as [`Lines::next_piece`]
    /// hands a piece over), if any.
    pub fn rest(&mut self) -> Option<(Vec<u8>, bool)> {
        if self.line.is_empty() {
            return None;
        }
        let continues = std::mem::take(&mut self.continuing);
        Some((std::mem::take(&mut self.line), continues))
    }

    /// The line [`Lines::next`] gave last was cut at the limit (bytes other than its
    /// line end were dropped).
    pub fn was_cut(&self) -> bool {
        self.truncated
    }

    /// The next complete line (with its `\n`, if it has one) taken from the front of
    /// `rest`, or `None` once `rest` is used up with no line completed.
    pub fn next(&mut self, rest: &mut &[u8], max: usize) -> Option<Vec<u8>> {
        while !rest.is_empty() {
            let (take, eol) = match rest.iter().position(|&c| c == b'\n') {
                Some(i) => (i + 1, true),
                None => (rest.len(), false),
            };
            let chunk = &rest[..take];
            *rest = &rest[take..];
            if self.cut {
                self.cut = !eol;
                continue;
            }
            let room = max.saturating_sub(self.line.len());
            self.line.extend_from_slice(&chunk[..take.min(room)]);
            if eol || self.line.len() >= max {
                self.cut = !eol;
                let dropped = &chunk[take.min(room)..];
                self.truncated = !eol || dropped.iter().any(|&c| c != b'\r' && c != b'\n');
                return Some(std::mem::take(&mut self.line));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(l: &mut Lines, mut bytes: &[u8], max: usize) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| l.next(&mut bytes, max)).collect()
    }

    #[test]
    fn lines_across_calls_and_cut_at_the_limit() {
        let mut l = Lines::default();
        assert!(all(&mut l, b"ab", 8).is_empty());
        assert_eq!(
            all(&mut l, b"c\r\nd\n", 8),
            [b"abc\r\n".to_vec(), b"d\n".to_vec()]
        );
        // Cut at 4; the rest of the line, over two calls, is dropped.
        assert_eq!(all(&mut l, b"123456", 4), [b"1234".to_vec()]);
        assert_eq!(all(&mut l, b"78\nok\n", 4), [b"ok\n".to_vec()]);
        assert!(!l.was_cut());
        // A line longer than the limit whose end comes in the same call is cut too;
        // one that loses only its line end is not.
        let mut rest = &b"123456\nabc\r\n"[..];
        assert_eq!(l.next(&mut rest, 4).unwrap(), b"1234");
        assert!(l.was_cut());
        assert_eq!(l.next(&mut rest, 4).unwrap(), b"abc\r");
        assert!(!l.was_cut());
    }

    #[test]
    fn pieces_keep_every_byte_of_a_long_line() {
        let mut l = Lines::default();
        let mut got = Vec::new();
        // Split across calls anywhere.
        for chunk in [&b"abcdefg"[..], b"hij\nxy", b"z\n"] {
            let mut rest = chunk;
            while let Some(p) = l.next_piece(&mut rest, 4) {
                got.push(p);
            }
        }
        let want: Vec<(Vec<u8>, bool)> = vec![
            (b"abcd".to_vec(), false),
            (b"efgh".to_vec(), true),
            (b"ij\n".to_vec(), true),
            (b"xyz\n".to_vec(), false),
        ];
        assert_eq!(got, want);
    }
}

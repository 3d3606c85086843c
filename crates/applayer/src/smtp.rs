//! SMTP (RFC 5321): the client's commands, the server's replies, and each mail's
//! envelope and message.
//!
//! A transaction is one mail: it begins with the first command after the previous one
//! ended (Suricata's numbering), holds the session's HELO name, `MAIL FROM`, the
//! `RCPT TO`s, and the message sent after `DATA`, decoded by [`crate::mime`]. It ends
//! with the message's closing `.` line, with `RSET` or `QUIT`, or with the flow.
//!
//! Both directions are read line by line; a command or reply longer than [`MAX_LINE`]
//! is cut there (the rest of it is dropped), a line of a message is read in pieces of
//! that size. At most 64 transactions are kept.

use crate::txs::{Events, Numbered, Txs};
use netsieve_wire::{AppEvent, Direction, PerDir};

use crate::lines::Lines;
use crate::mime::Mime;

/// Bytes of a line kept.
pub const MAX_LINE: usize = 8 * 1024;
/// Transactions kept (the oldest go first).
const MAX_TXS: usize = 64;
/// Recipients kept per mail.
const MAX_RCPT: usize = 256;

/// One mail.
#[derive(Debug, Default)]
pub struct Tx {
    pub id: u64,
    pub helo: Option<Vec<u8>>,
    pub mail_from: Option<Vec<u8>>,
    pub rcpt_to: Vec<Vec<u8>>,
    /// The message, once `DATA` began.
    pub mime: Option<Box<Mime>>,
    /// The mail ended.
    pub complete: bool,
}

/// A flow's SMTP state.
#[derive(Debug, Default)]
pub struct Smtp {
    pub txs: Txs<Tx, MAX_TXS>,
    /// The last HELO/EHLO name, carried into each new transaction.
    helo: Option<Vec<u8>>,
    /// Each direction's line so far.
    lines: PerDir<Lines>,
    /// The client sends a message (after `DATA`, up to its `.` line).
    data: bool,
    /// Message bytes were read since `DATA`: a reply to it no longer takes it back.
    data_seen: bool,
    /// The server's `220` welcome came.
    welcomed: bool,
    pub events: Events<AppEvent>,
}

impl Smtp {
    /// Feeds in-order bytes of one direction. Returns whether a mail ended.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        let mut ended = false;
        let mut rest = bytes;
        while !rest.is_empty() {
            // A message's lines are read whole, in pieces past the limit; commands and
            // replies are cut there.
            if dir == Direction::ToServer && self.data {
                let Some((piece, continues)) = self.lines[dir].next_piece(&mut rest, MAX_LINE)
                else {
                    break;
                };
                ended |= match continues {
                    true => self.data_continued(&piece),
                    false => self.client_line(&piece),
                };
                continue;
            }
            let Some(line) = self.lines[dir].next(&mut rest, MAX_LINE) else {
                break;
            };
            ended |= match dir {
                Direction::ToServer => self.client_line(&line),
                Direction::ToClient => self.server_line(&line),
            };
        }
        ended
    }

    /// The flow ended: the open mail ends as it is.
    pub fn finish(&mut self) {
        if let Some(t) = self.txs.back_mut()
            && !t.complete
        {
            end_tx(t);
        }
        self.data = false;
    }

    /// The transaction commands go to: the open one, or a new one.
    fn tx(&mut self) -> &mut Tx {
        if self.txs.back().is_none_or(|t| t.complete) {
            let helo = self.helo.clone();
            self.txs.begin(|id| Tx {
                id,
                helo,
                ..Tx::default()
            });
        }
        self.txs.back_mut().expect("pushed above")
    }

    fn client_line(&mut self, line: &[u8]) -> bool {
        if self.data {
            return self.data_line(line);
        }
        if !self.welcomed {
            self.events.raise(AppEvent::SmtpNoServerWelcomeMessage);
        }
        let text = line.trim_ascii_end();
        let (verb, arg) = match text.iter().position(|&c| c == b' ') {
            Some(i) => (&text[..i], text[i + 1..].trim_ascii()),
            None => (text, &b""[..]),
        };
        let is = |w: &str| verb.eq_ignore_ascii_case(w.as_bytes());
        if is("HELO") || is("EHLO") {
            self.helo = Some(arg.to_vec());
            let t = self.tx();
            t.helo = Some(arg.to_vec());
        } else if is("MAIL") {
            let from = strip_word(arg, b"FROM:");
            self.tx().mail_from = Some(first_word(from).to_vec());
        } else if is("RCPT") {
            let to = first_word(strip_word(arg, b"TO:")).to_vec();
            let t = self.tx();
            if t.rcpt_to.len() < MAX_RCPT {
                t.rcpt_to.push(to);
            }
        } else if is("DATA") {
            self.tx().mime = Some(Box::new(Mime::new()));
            self.data = true;
            self.data_seen = false;
        } else if is("RSET") || is("QUIT") {
            let t = self.tx();
            end_tx(t);
            return true;
        } else if !text.is_empty() {
            self.tx();
        }
        false
    }

    /// A line of the message: the `.` line ends it, a leading dot is unstuffed.
    fn data_line(&mut self, line: &[u8]) -> bool {
        self.data_seen = true;
        let Some(t) = self.txs.back_mut() else {
            self.data = false;
            return false;
        };
        if line.trim_ascii_end() == b"." {
            self.data = false;
            end_tx(t);
            return true;
        }
        let line = line.strip_prefix(b".").unwrap_or(line);
        if let Some(m) = t.mime.as_mut() {
            m.line(line);
            if std::mem::take(&mut m.long_boundary) {
                self.events.raise(AppEvent::SmtpMimeLongBoundary);
            }
        }
        false
    }

    /// More of the message's line before, past the line limit.
    fn data_continued(&mut self, piece: &[u8]) -> bool {
        if let Some(m) = self.txs.back_mut().and_then(|t| t.mime.as_mut()) {
            m.continued(piece);
        }
        false
    }

    fn server_line(&mut self, line: &[u8]) -> bool {
        self.welcomed |= line.starts_with(b"220");
        // A refused DATA (anything but 354 before the message began) takes it back.
        if self.data && !self.data_seen && line.len() >= 3 {
            let code = &line[..3];
            if code.iter().all(u8::is_ascii_digit) && code != b"354" && code[0] != b'2' {
                self.data = false;
                if let Some(t) = self.txs.back_mut() {
                    t.mime = None;
                }
            }
        }
        false
    }
}

fn end_tx(t: &mut Tx) {
    if let Some(m) = t.mime.as_mut() {
        m.finish();
    }
    t.complete = true;
}

/// `arg` without a leading `word` (case-insensitive) and the spaces after it.
fn strip_word<'a>(arg: &'a [u8], word: &[u8]) -> &'a [u8] {
    if arg.len() >= word.len() && arg[..word.len()].eq_ignore_ascii_case(word) {
        arg[word.len()..].trim_ascii_start()
    } else {
        arg
    }
}

/// The first space-separated word (the address, before `SIZE=...` and the like).
fn first_word(s: &[u8]) -> &[u8] {
    &s[..s.iter().position(|&c| c == b' ').unwrap_or(s.len())]
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{ToClient, ToServer};

    #[test]
    fn a_session() {
        let mut s = Smtp::default();
        s.feed(ToClient, b"220 mx ESMTP\r\n");
        s.feed(ToServer, b"EHLO GP\r\nMAIL FROM:<a@x> SIZE=10\r\n");
        s.feed(ToServer, b"RCPT TO: <b@y>\r\nRCPT TO:<c@y>\r\nDATA\r\n");
        s.feed(ToClient, b"354 go\r\n");
        s.feed(ToServer, b"Subject: hi\r\n\r\n..dot\r\n");
        assert!(s.feed(ToServer, b".\r\nQUIT\r\n"));
        assert_eq!(s.txs.len(), 2);
        let t = &s.txs[0];
        assert_eq!(t.helo.as_deref(), Some(&b"GP"[..]));
        assert_eq!(t.mail_from.as_deref(), Some(&b"<a@x>"[..]));
        assert_eq!(t.rcpt_to, [b"<b@y>".to_vec(), b"<c@y>".to_vec()]);
        let m = t.mime.as_ref().unwrap();
        assert_eq!(m.header("subject"), Some(&b"hi"[..]));
        assert!(t.complete && m.done);
        assert_eq!(s.txs[1].id, 1);
        assert_eq!(s.txs[1].helo.as_deref(), Some(&b"GP"[..]));
    }

    /// Measured on the reference with built sessions: a boundary of 255 bytes raises
    /// `mime_long_boundary`, 254 does not; each command before the `220` welcome raises
    /// `no_server_welcome_message`.
    #[test]
    fn events_as_suricata_raises_them() {
        let mail = |n: usize| {
            let b = "B".repeat(n);
            format!(
                "DATA\r\nContent-Type: multipart/mixed; boundary=\"{b}\"\r\n\r\n--{b}\r\n\r\nhi\r\n--{b}--\r\n.\r\n"
            )
        };
        for (n, raised) in [(254, false), (255, true), (300, true)] {
            let mut s = Smtp::default();
            s.feed(ToClient, b"220 mx ESMTP\r\n");
            s.feed(ToServer, b"EHLO a\r\nMAIL FROM:<a@x>\r\nRCPT TO:<b@y>\r\n");
            s.feed(ToServer, mail(n).as_bytes());
            let long = s
                .events
                .iter()
                .filter(|&&e| e == AppEvent::SmtpMimeLongBoundary);
            assert_eq!(long.count(), usize::from(raised), "boundary of {n}");
            assert_eq!(s.events.raised(), u64::from(raised), "boundary of {n}");
        }
        let mut s = Smtp::default();
        s.feed(ToServer, b"EHLO a\r\n");
        s.feed(ToClient, b"250 ok\r\n");
        s.feed(ToServer, b"QUIT\r\n");
        s.feed(ToClient, b"220 late\r\n");
        s.feed(ToServer, b"NOOP\r\n");
        let no_welcome = [AppEvent::SmtpNoServerWelcomeMessage; 2];
        assert_eq!(s.events.iter().copied().collect::<Vec<_>>(), no_welcome);
    }

    #[test]
    fn refused_data_is_taken_back() {
        let mut s = Smtp::default();
        s.feed(ToServer, b"HELO a\r\nMAIL FROM:<a@x>\r\nDATA\r\n");
        s.feed(ToClient, b"554 no valid recipients\r\n");
        s.feed(ToServer, b"RSET\r\n");
        assert!(s.txs[0].complete);
        assert!(s.txs[0].mime.is_none());
    }

    #[test]
    fn lines_split_anywhere() {
        let text = b"HELO a\r\nMAIL FROM:<a@x>\r\nRCPT TO:<b@y>\r\nDATA\r\nX: 1\r\n\r\nb\r\n.\r\n";
        for cut in 0..text.len() {
            let mut s = Smtp::default();
            s.feed(ToServer, &text[..cut]);
            s.feed(ToServer, &text[cut..]);
            assert!(s.txs[0].complete, "cut at {cut}");
            assert_eq!(s.txs[0].rcpt_to.len(), 1);
        }
    }

    #[test]
    fn long_lines_are_bounded() {
        let mut s = Smtp::default();
        s.feed(ToServer, b"HELO ");
        s.feed(ToServer, &vec![b'a'; 100_000]);
        s.feed(ToServer, b"\r\n");
        assert!(s.txs[0].helo.as_ref().unwrap().len() <= MAX_LINE);
    }
}

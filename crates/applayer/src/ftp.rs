//! FTP's control channel (RFC 959): the client's commands and the server's replies,
//! paired in order, one transaction per command (and one for the server's greeting),
//! as Suricata numbers them.
//!
//! A reply is one line `DDD text`, or several from `DDD-text` to `DDD text`; a 1xx
//! reply is preliminary and the command waits for another. `PASV`, `EPSV` and `PORT`
//! name the data channel's port. Lines are cut at [`MAX_LINE`] bytes (the rest of the
//! line is dropped; the transaction says so, and an event is raised), and at most 256
//! transactions are kept.

use crate::txs::{Events, Numbered, Txs};
use netsieve_wire::{AppEvent, Direction, PerDir};

use crate::lines::Lines;

/// Bytes of a line kept.
pub const MAX_LINE: usize = 4096;
/// Transactions kept (the oldest go first).
const MAX_TXS: usize = 256;
/// Reply lines kept per transaction.
const MAX_REPLIES: usize = 64;

/// The commands that open a transaction (RFC 959's, and `SIZE`, `MDTM`, `EPSV`,
/// `EPRT`; not `FEAT`, `AUTH`, `MLST` and other extensions), as Suricata knows them.
const COMMANDS: &[&[u8]] = &[
    b"ABOR", b"ACCT", b"ALLO", b"APPE", b"CDUP", b"CHMOD", b"CWD", b"DELE", b"EPRT", b"EPSV",
    b"HELP", b"IDLE", b"LIST", b"MDTM", b"MKD", b"MODE", b"NLST", b"NOOP", b"PASS", b"PASV",
    b"PORT", b"PWD", b"QUIT", b"REIN", b"REST", b"RETR", b"RMD", b"RNFR", b"RNTO", b"SITE",
    b"SIZE", b"SMNT", b"STAT", b"STOR", b"STOU", b"STRU", b"SYST", b"TYPE", b"UMASK", b"USER",
];

/// How the data channel is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The server listens (`PASV`, `EPSV`).
    Passive,
    /// The client listens (`PORT`, `EPRT`).
    Active,
}

/// One command and its reply (the greeting has no command).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tx {
    pub id: u64,
    pub command: Option<Vec<u8>>,
    /// What follows the command's verb.
    pub command_data: Vec<u8>,
    /// The reply codes, one per reply (a preliminary one, then the final one).
    pub completion_codes: Vec<Vec<u8>>,
    /// The replies' text (a multi-line reply: its first line as sent).
    pub replies: Vec<Vec<u8>>,
    /// The data channel's port, and how it is opened.
    pub dynamic_port: Option<(u16, Mode)>,
    /// The final reply arrived.
    pub complete: bool,
    /// The command's line, or a line of its reply, was longer than [`MAX_LINE`].
    pub command_truncated: bool,
    pub reply_truncated: bool,
}

/// A flow's FTP state.
#[derive(Debug)]
pub struct Ftp {
    pub txs: Txs<Tx, MAX_TXS>,
    /// Commands waiting for their replies at most: one more raises
    /// `ftp.too_many_transactions` and ends the reading of the flow's FTP.
    max_open: usize,
    stopped: bool,
    lines: PerDir<Lines>,
    /// The lines of the reply being read, and whether one was cut.
    reply: Vec<Vec<u8>>,
    reply_cut: bool,
    pub events: Events<AppEvent>,
}

impl Default for Ftp {
    fn default() -> Self {
        Ftp::new(1024)
    }
}

impl Ftp {
    /// At most `max_open` commands waiting for their replies (Suricata's `max-tx`).
    pub fn new(max_open: usize) -> Ftp {
        Ftp {
            txs: Txs::default(),
            max_open,
            stopped: false,
            lines: PerDir::default(),
            reply: Vec::new(),
            reply_cut: false,
            events: Events::default(),
        }
    }

    /// Feeds in-order bytes of one direction. Returns whether a reply completed.
    pub fn feed(&mut self, dir: Direction, bytes: &[u8]) -> bool {
        let mut done = false;
        let mut rest = bytes;
        while !self.stopped
            && let Some(line) = self.lines[dir].next(&mut rest, MAX_LINE)
        {
            let cut = self.lines[dir].was_cut();
            let text = line.trim_ascii_end();
            match dir {
                Direction::ToServer => self.command(text, cut),
                Direction::ToClient => done |= self.reply(text, cut),
            }
        }
        done
    }

    fn push(&mut self, tx: Tx) {
        self.txs.begin(|id| Tx { id, ..tx });
    }

    fn command(&mut self, text: &[u8], cut: bool) {
        if cut {
            self.events.raise(AppEvent::FtpRequestCommandTooLong);
        }
        if text.is_empty() {
            return;
        }
        let (verb, arg) = match text.iter().position(|&c| c == b' ') {
            Some(i) => (&text[..i], &text[i + 1..]),
            None => (text, &b""[..]),
        };
        let verb = verb.to_ascii_uppercase();
        // A command Suricata does not know opens no transaction.
        if !COMMANDS.contains(&&verb[..]) {
            return;
        }
        // As Suricata counts them: the transactions not yet complete, a command over
        // the limit raising the event on the oldest of them (measured: bug-8489).
        if self.txs.iter().filter(|t| !t.complete).count() >= self.max_open {
            self.events.raise(AppEvent::FtpTooManyTransactions);
            self.stopped = true;
            // Those waiting will have no reply read: they are done with (logged at
            // once, as Suricata logs them).
            self.txs.iter_mut().for_each(|t| t.complete = true);
            return;
        }
        let dynamic_port = match &verb[..] {
            b"PORT" => port_of_h_p(arg).map(|p| (p, Mode::Active)),
            b"EPRT" => eprt_port(arg).map(|p| (p, Mode::Active)),
            _ => None,
        };
        self.push(Tx {
            command: Some(verb),
            command_data: arg.to_vec(),
            dynamic_port,
            command_truncated: cut,
            ..Tx::default()
        });
    }

    /// A reply line; returns whether it completed a transaction.
    ///
    /// As Suricata reads replies, a reply ends at the first line that starts with a
    /// code: `DDD text` gives the code and `text`, `DDD-text` (the first line of a
    /// multi-line reply) is a reply of its own as sent, without a code, and the lines
    /// after it belong to the reply that `DDD text` closes.
    fn reply(&mut self, text: &[u8], cut: bool) -> bool {
        if cut {
            self.events.raise(AppEvent::FtpResponseCommandTooLong);
            self.reply_cut = true;
        }
        if text.is_empty() {
            return false;
        }
        let code: Option<[u8; 3]> = text
            .get(..3)
            .filter(|c| c.iter().all(u8::is_ascii_digit))
            .map(|c| [c[0], c[1], c[2]]);
        let end = match (code, text.get(3)) {
            (Some(c), None | Some(b' ')) => Some(Some(c)),
            (Some(_), Some(b'-')) => Some(None),
            _ => None,
        };
        let line = match end {
            Some(Some(_)) => text.get(4..).unwrap_or_default(),
            _ => text,
        };
        if self.reply.len() < MAX_REPLIES {
            self.reply.push(line.to_vec());
        }
        let Some(code) = end else { return false };
        let lines = std::mem::take(&mut self.reply);
        let reply_cut = std::mem::take(&mut self.reply_cut);
        // The greeting, or a reply with no command waiting: a transaction of its own.
        if !self.txs.iter().any(|t| !t.complete) {
            self.push(Tx::default());
        }
        let Some(t) = self.txs.iter_mut().find(|t| !t.complete) else {
            return false;
        };
        t.replies.extend(lines);
        t.replies.truncate(MAX_REPLIES);
        t.reply_truncated |= reply_cut;
        let Some(code) = code else {
            t.complete = true;
            return true;
        };
        t.completion_codes.push(code.to_vec());
        t.completion_codes.truncate(MAX_REPLIES);
        match &code {
            b"227" => t.dynamic_port = port_of_h_p(line).map(|p| (p, Mode::Passive)),
            b"229" => t.dynamic_port = epsv_port(line).map(|p| (p, Mode::Passive)),
            _ => {}
        }
        // A preliminary reply: the command waits for another.
        if code[0] == b'1' {
            return false;
        }
        t.complete = true;
        true
    }

    /// The flow ended: transactions left waiting stay incomplete.
    pub fn finish(&mut self) {}
}

/// The port of `h1,h2,h3,h4,p1,p2` (PORT's argument, inside PASV's reply).
fn port_of_h_p(s: &[u8]) -> Option<u16> {
    let start = s.iter().position(u8::is_ascii_digit)?;
    let nums: Vec<u16> = s[start..]
        .split(|&c| c == b',')
        .take(6)
        .map(|n| {
            let d: Vec<u8> = n.iter().copied().take_while(u8::is_ascii_digit).collect();
            std::str::from_utf8(&d).ok()?.parse::<u16>().ok()
        })
        .collect::<Option<_>>()?;
    if nums.len() != 6 || nums.iter().any(|&n| n > 255) {
        return None;
    }
    Some(nums[4] << 8 | nums[5])
}

/// The port of EPSV's reply `(|||port|)`.
fn epsv_port(s: &[u8]) -> Option<u16> {
    let at = s.windows(3).position(|w| w == b"|||")? + 3;
    let digits: Vec<u8> = s[at..]
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// The port of EPRT's argument `|proto|addr|port|`.
fn eprt_port(s: &[u8]) -> Option<u16> {
    let d = *s.first()?;
    let fields: Vec<&[u8]> = s.split(|&c| c == d).collect();
    std::str::from_utf8(fields.get(3)?).ok()?.parse().ok()
}

impl Numbered for Tx {
    fn id(&self) -> u64 {
        self.id
    }
}

/// The commands that move data over the data channel; the listings name no file.
const TRANSFERS: [&[u8]; 7] = [
    b"RETR", b"STOR", b"APPE", b"STOU", b"LIST", b"NLST", b"MLSD",
];
const LISTINGS: [&[u8]; 3] = [b"LIST", b"NLST", b"MLSD"];

impl Tx {
    /// The transfer this command starts on the data channel, if it starts one: its
    /// verb as sent and the file it names (`STOU` without a name stores `<stou>`).
    pub fn transfer(&self) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        let verb = self.command.as_deref()?;
        let is = |names: &[&[u8]]| names.iter().any(|n| verb.eq_ignore_ascii_case(n));
        if !is(&TRANSFERS) {
            return None;
        }
        let arg = self.command_data.trim_ascii();
        let file = if is(&LISTINGS) {
            None
        } else if arg.is_empty() && is(&[b"STOU"]) {
            Some(b"<stou>".to_vec())
        } else {
            (!arg.is_empty()).then(|| arg.to_vec())
        };
        Some((verb.to_vec(), file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_commands_name_their_file() {
        let tx = |verb: &[u8], arg: &[u8]| Tx {
            command: Some(verb.to_vec()),
            command_data: arg.to_vec(),
            ..Tx::default()
        };
        let t = |verb, arg| tx(verb, arg).transfer();
        assert_eq!(
            t(b"retr", b" a.txt "),
            Some((b"retr".to_vec(), Some(b"a.txt".to_vec())))
        );
        assert_eq!(t(b"NLST", b"dir"), Some((b"NLST".to_vec(), None)));
        assert_eq!(
            t(b"STOU", b""),
            Some((b"STOU".to_vec(), Some(b"<stou>".to_vec())))
        );
        assert_eq!(t(b"STOR", b""), Some((b"STOR".to_vec(), None)));
        assert_eq!(t(b"PASV", b""), None);
        assert_eq!(Tx::default().transfer(), None);
    }
    use Direction::{ToClient, ToServer};

    #[test]
    fn too_many_commands_waiting_end_the_reading() {
        let mut f = Ftp::new(1);
        f.feed(ToClient, b"220 hello\r\n");
        f.feed(ToServer, b"USER u\r\n");
        f.feed(ToClient, b"331 pass?\r\n");
        assert!(f.events.is_empty());
        // One command waits: a second is one too many.
        f.feed(ToServer, b"PWD\r\nPWD\r\nPWD\r\n");
        assert_eq!(f.events, [AppEvent::FtpTooManyTransactions]);
        assert_eq!(f.txs.len(), 3);
        assert!(f.txs.iter().all(|t| t.complete));
        // Nothing more is read, either way.
        f.feed(ToClient, b"257 \"/\"\r\n");
        f.feed(ToServer, b"CWD /tmp\r\n");
        assert_eq!(f.txs.len(), 3);
        assert!(f.txs[2].completion_codes.is_empty());
        // With the default limit, the same commands are read.
        let mut f = Ftp::default();
        f.feed(ToServer, b"PWD\r\nPWD\r\nPWD\r\n");
        assert_eq!(f.txs.len(), 3);
        assert!(f.events.is_empty());
    }

    #[test]
    fn a_session() {
        let mut f = Ftp::default();
        f.feed(ToClient, b"220 welcome\r\n");
        f.feed(ToServer, b"USER anonymous\r\nPASS x@\r\n");
        f.feed(
            ToClient,
            b"331 Please specify the password.\r\n230 Login successful.\r\n",
        );
        f.feed(ToServer, b"FEAT\r\nHELP SITE\r\n");
        f.feed(ToClient, b"211-Features:\r\n EPSV\r\n211 End\r\n");
        f.feed(
            ToClient,
            b"214-The following commands are recognized.\r\n ABOR\r\n214 Help OK.\r\n",
        );
        f.feed(ToServer, b"PASV\r\nLIST\r\n");
        f.feed(
            ToClient,
            b"227 Entering Passive Mode (90,130,70,73,100,85).\r\n",
        );
        f.feed(
            ToClient,
            b"150 Here comes the directory listing.\r\n226 Directory send OK.\r\n",
        );
        let t: Vec<&Tx> = f.txs.iter().collect();
        assert_eq!(t.len(), 9);
        assert_eq!(t[0].command, None);
        assert_eq!(t[0].completion_codes, [b"220".to_vec()]);
        assert_eq!(t[1].command.as_deref(), Some(&b"USER"[..]));
        assert_eq!(t[1].command_data, b"anonymous");
        assert_eq!(t[2].replies, [b"Login successful.".to_vec()]);
        // FEAT opens no transaction: its reply's first line goes to HELP, the waiting
        // command, and the rest of it to a transaction of its own; so does HELP's.
        assert_eq!(t[3].command.as_deref(), Some(&b"HELP"[..]));
        assert_eq!(t[3].replies, [b"211-Features:".to_vec()]);
        assert!(t[3].completion_codes.is_empty() && t[3].complete);
        assert_eq!(t[4].command, None);
        assert_eq!(t[4].replies, [b" EPSV".to_vec(), b"End".to_vec()]);
        assert_eq!(t[4].completion_codes, [b"211".to_vec()]);
        assert_eq!(
            t[5].replies,
            [b"214-The following commands are recognized.".to_vec()]
        );
        assert_eq!(t[6].completion_codes, [b"214".to_vec()]);
        assert_eq!(t[7].dynamic_port, Some((25685, Mode::Passive)));
        assert_eq!(t[8].completion_codes, [b"150".to_vec(), b"226".to_vec()]);
        assert!(t.iter().all(|t| t.complete));
    }

    #[test]
    fn ports_of_every_form() {
        assert_eq!(port_of_h_p(b"10,0,0,1,4,1"), Some(1025));
        assert_eq!(port_of_h_p(b"10,0,0,1,4"), None);
        assert_eq!(port_of_h_p(b"10,0,0,1,4,300"), None);
        assert_eq!(
            epsv_port(b"Entering Extended Passive Mode (|||6446|)"),
            Some(6446)
        );
        assert_eq!(eprt_port(b"|2|::1|6275|"), Some(6275));
        let mut f = Ftp::default();
        f.feed(ToServer, b"port 192,168,1,2,7,138\r\n");
        assert_eq!(f.txs[0].dynamic_port, Some((1930, Mode::Active)));
        assert_eq!(f.txs[0].command.as_deref(), Some(&b"PORT"[..]));
    }

    #[test]
    fn lines_are_bounded() {
        let mut f = Ftp::default();
        f.feed(ToServer, b"STOR ");
        f.feed(ToServer, &vec![b'a'; 100_000]);
        f.feed(ToServer, b"\r\nNOOP\r\n");
        assert_eq!(f.txs.len(), 2);
        assert!(f.txs[0].command_data.len() <= MAX_LINE);
        // The long command says it was cut, and raised its event; the next did not.
        assert!(f.txs[0].command_truncated && !f.txs[1].command_truncated);
        assert_eq!(f.events, [AppEvent::FtpRequestCommandTooLong]);
        let long_reply = [b"227 ".as_slice(), &[b'x'; 5000], b"\r\n"].concat();
        f.feed(ToClient, &long_reply);
        assert!(f.txs[0].reply_truncated);
        assert_eq!(f.events[1], AppEvent::FtpResponseCommandTooLong);
        for _ in 0..1000 {
            f.feed(ToServer, b"NOOP\r\n");
        }
        assert!(f.txs.len() <= MAX_TXS);
    }
}

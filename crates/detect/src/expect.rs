//! Flows that another flow announces: FTP's data channels. When an FTP command or
//! reply names a data port (`PASV`, `EPSV`, `PORT`, `EPRT`), the TCP flow that then
//! opens to that address and port is FTP data (Suricata's `ftp-data`), whatever its
//! bytes say.
//!
//! The table is shared by every worker ([`crate::engine::Shared`]: the data flow may land on another thread than
//! its control flow), bounded ([`MAX_EXPECTED`]), and an expectation lapses after
//! [`LIFETIME`] or once a flow took it. With several threads, a data flow may be seen
//! before another thread parsed the reply that announces it (then it is not named), as
//! in Suricata's autofp mode.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use netsieve_applayer::AppProto;

/// Expectations kept at most (the table is cleared of lapsed ones when full).
pub const MAX_EXPECTED: usize = 4096;
/// How long an expectation waits for its flow.
pub const LIFETIME: Duration = Duration::from_secs(120);

/// Announced flows: the server's address and port, to the protocol and the time the
/// expectation lapses.
#[derive(Debug, Default)]
pub struct Expected {
    flows: HashMap<(IpAddr, u16), (AppProto, Duration)>,
    /// FTP data channels' transfers, by the channel's server: the command and the file
    /// it names, and when the description lapses.
    transfers: HashMap<(IpAddr, u16), Transfer>,
}

/// What an FTP data channel carries: its control flow's command and the file it names.
type Transfer = (Vec<u8>, Option<Vec<u8>>, Duration);

impl Expected {
    /// A flow of `proto` to `server` is announced at `now`.
    pub fn announce(&mut self, server: (IpAddr, u16), proto: AppProto, now: Duration) {
        if self.flows.len() >= MAX_EXPECTED {
            self.flows.retain(|_, e| e.1 > now);
        }
        if self.flows.len() < MAX_EXPECTED {
            self.flows.insert(server, (proto, now + LIFETIME));
        }
    }

    /// The protocol of a new flow to `server` at `now`, if one was announced (the
    /// expectation is used up).
    pub fn take(&mut self, server: (IpAddr, u16), now: Duration) -> Option<AppProto> {
        match self.flows.remove(&server) {
            Some((p, until)) if until > now => Some(p),
            _ => None,
        }
    }

    /// The data channel to `server` carries `command`'s transfer of `file` (described
    /// at `now`; a later description of the same channel replaces it).
    pub fn describe(
        &mut self,
        server: (IpAddr, u16),
        command: Vec<u8>,
        file: Option<Vec<u8>>,
        now: Duration,
    ) {
        if self.transfers.len() >= MAX_EXPECTED {
            self.transfers.retain(|_, e| e.2 > now);
        }
        if self.transfers.len() < MAX_EXPECTED {
            self.transfers
                .insert(server, (command, file, now + LIFETIME));
        }
    }

    /// The transfer the data channel to `server` carries, if its control flow told it
    /// (the description is used up).
    pub fn transfer(
        &mut self,
        server: (IpAddr, u16),
        now: Duration,
    ) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
        match self.transfers.remove(&server) {
            Some((command, file, until)) if until > now => Some((command, file)),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty() && self.transfers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announced_flow_is_taken_once_and_lapses() {
        let s = |secs| Duration::from_secs(secs);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let mut e = Expected::default();
        e.announce((a, 2000), AppProto::FtpData, s(0));
        assert_eq!(e.take((a, 2001), s(1)), None);
        assert_eq!(e.take((a, 2000), s(1)), Some(AppProto::FtpData));
        assert_eq!(e.take((a, 2000), s(2)), None);
        e.announce((a, 2000), AppProto::FtpData, s(0));
        assert_eq!(e.take((a, 2000), s(121)), None);
        for port in 0..10_000 {
            e.announce((a, port), AppProto::FtpData, s(u64::from(port)));
        }
        assert!(e.flows.len() <= MAX_EXPECTED);
    }
}

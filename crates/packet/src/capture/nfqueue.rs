//! NFQUEUE (`-q N`): the kernel's netfilter hands each packet that a firewall rule
//! queues (`nft ... queue num N`, `iptables -j NFQUEUE --queue-num N`) to netsieve, and
//! waits for a verdict, as Suricata's NFQ mode. The queue is set to fail open: when
//! netsieve falls behind and the queue is full, the kernel accepts packets instead of
//! dropping them.

use std::time::{Duration, Instant, SystemTime};

use super::{CaptureError, Frame, Next};

/// LINKTYPE_RAW: the frame starts with the IP header.
const RAW_IP: u32 = 101;

/// Packets the kernel keeps queued before it fails open.
const QUEUE_LEN: u32 = 4096;

/// A bound netfilter queue.
pub struct NfQueue {
    name: String,
    num: u16,
    q: nfq::Queue,
    /// The packet handed out last, waiting for its verdict.
    held: Option<nfq::Message>,
}

/// How long [`NfQueue::next`] sleeps between looks at a quiet queue, and how long it
/// looks before it answers [`Next::Idle`].
const NAP: Duration = Duration::from_micros(200);
const IDLE: Duration = Duration::from_millis(100);

impl NfQueue {
    pub fn open(num: u16) -> Result<NfQueue, CaptureError> {
        let name = format!("nfqueue:{num}");
        let fail = |e: std::io::Error| CaptureError {
            file: name.clone(),
            packet: None,
            message: if e.kind() == std::io::ErrorKind::PermissionDenied {
                format!("{e} (NFQUEUE needs root or CAP_NET_ADMIN)")
            } else {
                e.to_string()
            },
        };
        let mut q = nfq::Queue::open().map_err(fail)?;
        q.bind(num).map_err(fail)?;
        q.set_fail_open(num, true).map_err(fail)?;
        q.set_queue_max_len(num, QUEUE_LEN).map_err(fail)?;
        q.set_recv_enobufs(false).map_err(fail)?;
        q.set_nonblocking(true);
        Ok(NfQueue {
            name,
            num,
            q,
            held: None,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next queued packet, [`Next::Idle`] after a while without one. A packet
    /// handed out earlier and given no verdict is accepted first.
    pub fn next(&mut self, frame: &mut Frame) -> Result<Next, CaptureError> {
        if self.held.is_some() {
            self.verdict(true)?;
        }
        let start = Instant::now();
        let msg = loop {
            match self.q.recv() {
                Ok(m) => break m,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if start.elapsed() >= IDLE {
                        return Ok(Next::Idle);
                    }
                    std::thread::sleep(NAP);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(e)),
            }
        };
        frame.ts = msg
            .get_timestamp()
            .unwrap_or_else(SystemTime::now)
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        frame.linktype = RAW_IP;
        frame.data.clear();
        frame.data.extend_from_slice(msg.get_payload());
        frame.orig_len = u32::try_from(msg.get_original_len()).unwrap_or(u32::MAX);
        self.held = Some(msg);
        Ok(Next::Frame)
    }

    /// The verdict on the packet handed out last: accept or drop.
    pub fn verdict(&mut self, accept: bool) -> Result<(), CaptureError> {
        let Some(mut msg) = self.held.take() else {
            return Ok(());
        };
        msg.set_verdict(if accept {
            nfq::Verdict::Accept
        } else {
            nfq::Verdict::Drop
        });
        self.q.verdict(msg).map_err(|e| self.error(e))
    }

    fn error(&self, e: std::io::Error) -> CaptureError {
        CaptureError {
            file: self.name.clone(),
            packet: None,
            message: e.to_string(),
        }
    }
}

impl Drop for NfQueue {
    /// A packet still held is accepted, and the queue unbound, so that nothing stays
    /// queued after netsieve stops.
    fn drop(&mut self) {
        let _ = self.verdict(true);
        let _ = self.q.unbind(self.num);
    }
}

//! Live capture from a network interface: AF_PACKET with a memory-mapped TPACKET_V3 ring
//! (the `netring` crate), the way Suricata's `af-packet` capture reads.
//!
//! The kernel fills blocks of the ring and hands each to us whole; the frames of a block
//! are copied out one by one as the pipeline asks for them (the pipeline keeps a frame
//! while a packet refers to it, and a block must go back to the kernel promptly). When
//! nothing arrives for a while, [`Interface::next`] says [`Next::Idle`], so that the
//! caller can look at its stop flag, sweep idle flows and flush its outputs.

use std::time::Duration;

use super::{CaptureError, Frame, Next};

/// How to open an interface.
#[derive(Clone, Debug, Default)]
pub struct LiveOptions {
    /// Receive frames addressed to other hosts too (as Suricata does by default).
    pub promiscuous: bool,
    /// A classic BPF program (`struct sock_filter` instructions: code, jt, jf, k) the
    /// kernel runs on every frame before it is copied into the ring.
    pub filter: Option<Vec<(u16, u8, u8, u32)>>,
}

/// An open interface.
pub struct Interface {
    name: String,
    ring: netring::Capture,
    /// Frames copied out of the last block: their bytes in `bytes`, and per frame its
    /// time, length on the wire and end in `bytes`.
    bytes: Vec<u8>,
    frames: Vec<(Duration, u32, usize)>,
    /// The next frame of `frames` to hand out.
    next: usize,
}

/// The ring: blocks of 1 MiB (a block holds many frames; the kernel hands it over when
/// full or after the block timeout).
const RING_BLOCK: usize = 1 << 20;
const RING_BLOCKS: usize = 32;

/// How long [`Interface::next`] waits for a block before it answers [`Next::Idle`].
const IDLE: Duration = Duration::from_millis(100);

impl Interface {
    /// Opens `name` for capture.
    pub fn open(name: &str, opts: &LiveOptions) -> Result<Interface, CaptureError> {
        let fail = |message: String| CaptureError {
            file: name.to_string(),
            packet: None,
            message,
        };
        let mut b = netring::Capture::builder()
            .interface(name)
            .promiscuous(opts.promiscuous)
            // 32 MiB of ring (netring's default is 256 MiB): at 10 Gbit/s that still
            // holds 25 ms of traffic while a worker is busy.
            .block_size(RING_BLOCK)
            .block_count(RING_BLOCKS)
            // Blocks are handed over at least this often when traffic is light, so that
            // a lone packet is inspected at once and not when its block fills.
            .block_timeout_ms(10)
            .poll_timeout(IDLE);
        if let Some(insns) = &opts.filter {
            let insns = insns
                .iter()
                .map(|&(code, jt, jf, k)| netring::BpfInsn { code, jt, jf, k })
                .collect();
            let f = netring::BpfFilter::new(insns).map_err(|e| fail(e.to_string()))?;
            b = b.bpf_filter(f);
        }
        let ring = b.build().map_err(|e| fail(open_error(e)))?;
        Ok(Interface {
            name: name.to_string(),
            ring,
            bytes: Vec::new(),
            frames: Vec::new(),
            next: 0,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next frame, [`Next::Idle`] after a while without one. A live capture has no
    /// end of its own: it runs until the caller stops asking.
    pub fn next(&mut self, frame: &mut Frame) -> Result<Next, CaptureError> {
        if self.next == self.frames.len() && !self.fill()? {
            return Ok(Next::Idle);
        }
        let (ts, orig_len, end) = self.frames[self.next];
        let start = match self.next {
            0 => 0,
            i => self.frames[i - 1].2,
        };
        self.next += 1;
        frame.ts = ts;
        frame.orig_len = orig_len;
        // Frames on AF_PACKET raw sockets start with the link-layer header; netsieve
        // reads Ethernet interfaces (and loopback, which looks like Ethernet).
        frame.linktype = 1;
        frame.data.clear();
        frame.data.extend_from_slice(&self.bytes[start..end]);
        Ok(Next::Frame)
    }

    /// Frames the kernel counted and dropped (the ring was full) since the socket
    /// opened.
    pub fn kernel_stats(&self) -> Option<(u64, u64)> {
        let s = self.ring.cumulative_stats().ok()?;
        Some((u64::from(s.packets), u64::from(s.drops)))
    }

    /// Copies the next block's frames out of the ring; false when none came in time.
    fn fill(&mut self) -> Result<bool, CaptureError> {
        self.bytes.clear();
        self.frames.clear();
        self.next = 0;
        let batch = self
            .ring
            .next_batch_blocking(IDLE)
            .map_err(|e| CaptureError {
                file: self.name.clone(),
                packet: None,
                message: e.to_string(),
            })?;
        let Some(batch) = batch else {
            return Ok(false);
        };
        for p in &batch {
            self.bytes.extend_from_slice(p.data());
            let orig = u32::try_from(p.original_len()).unwrap_or(u32::MAX);
            self.frames
                .push((p.timestamp().to_duration(), orig, self.bytes.len()));
        }
        // The block goes back to the kernel when `batch` is dropped, here.
        Ok(!self.frames.is_empty())
    }
}

/// The reason an interface did not open, as a user can act on it.
fn open_error(e: netring::Error) -> String {
    let text = e.to_string();
    if text.contains("Operation not permitted") || text.contains("EPERM") {
        format!("{text} (live capture needs root or CAP_NET_RAW)")
    } else {
        text
    }
}

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

/// How long a lone frame may wait in a ring block before the kernel hands the block
/// over: short inline, where every frame waits for its verdict.
const BLOCK_TIMEOUT_IDS_MS: u32 = 10;
const BLOCK_TIMEOUT_INLINE_MS: u32 = 1;

/// An open interface.
pub struct Interface {
    name: String,
    ring: netring::Capture,
    /// Frames copied out of the last block (the first `filled`); each is handed out by
    /// swapping it with the caller's frame, so a frame's bytes are copied once and the
    /// buffers go round between the caller and here.
    frames: Vec<Frame>,
    filled: usize,
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
        Interface::open_as(name, opts, false)
    }

    /// Opens `name`; `inline` for one side of a bridge: short block timeouts, and the
    /// frames the bridge itself sends out of the interface are not read back.
    fn open_as(name: &str, opts: &LiveOptions, inline: bool) -> Result<Interface, CaptureError> {
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
            .block_timeout_ms(if inline {
                BLOCK_TIMEOUT_INLINE_MS
            } else {
                BLOCK_TIMEOUT_IDS_MS
            })
            .ignore_outgoing(inline)
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
            frames: Vec::new(),
            filled: 0,
            next: 0,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next frame, [`Next::Idle`] after a while without one. A live capture has no
    /// end of its own: it runs until the caller stops asking.
    pub fn next(&mut self, frame: &mut Frame) -> Result<Next, CaptureError> {
        if !self.buffered() && !self.fill(IDLE)? {
            return Ok(Next::Idle);
        }
        std::mem::swap(frame, &mut self.frames[self.next]);
        self.next += 1;
        Ok(Next::Frame)
    }

    /// Frames the kernel counted and dropped (the ring was full) since the socket
    /// opened.
    pub fn kernel_stats(&self) -> Option<(u64, u64)> {
        let s = self.ring.cumulative_stats().ok()?;
        Some((u64::from(s.packets), u64::from(s.drops)))
    }

    /// Frames copied out and not handed out yet.
    fn buffered(&self) -> bool {
        self.next < self.filled
    }

    /// Copies the next block's frames out of the ring, waiting up to `wait` for one;
    /// false when none came in time.
    fn fill(&mut self, wait: Duration) -> Result<bool, CaptureError> {
        self.filled = 0;
        self.next = 0;
        let batch = self
            .ring
            .next_batch_blocking(wait)
            .map_err(|e| CaptureError {
                file: self.name.clone(),
                packet: None,
                message: e.to_string(),
            })?;
        let Some(batch) = batch else {
            return Ok(false);
        };
        for p in &batch {
            if self.filled == self.frames.len() {
                self.frames.push(Frame::default());
            }
            let f = &mut self.frames[self.filled];
            self.filled += 1;
            f.ts = p.timestamp().to_duration();
            f.orig_len = u32::try_from(p.original_len()).unwrap_or(u32::MAX);
            // Frames on AF_PACKET raw sockets start with the link-layer header; netsieve
            // reads Ethernet interfaces (and loopback, which looks like Ethernet).
            f.linktype = 1;
            f.data.clear();
            f.data.extend_from_slice(p.data());
            // A frame this host sends may have its TCP/UDP checksum left to the network
            // card (the kernel marks it): completed as it will be on the wire, and as a
            // bridge must send it on.
            if p.status().csum_not_ready {
                crate::checksum::complete_l4(&mut f.data);
            }
        }
        // The block goes back to the kernel when `batch` is dropped, here.
        Ok(self.filled > 0)
    }
}

/// Two interfaces bridged, as Suricata's AF_PACKET copy mode: every frame read on one
/// goes out of the other, unless the caller drops it (by not calling
/// [`Bridge::forward`]).
pub struct Bridge {
    sides: [Interface; 2],
    out: [Sender; 2],
    /// The side the last frame came from.
    last: usize,
    /// The side to look at first next time (the two take turns).
    turn: usize,
    /// Frames that could not be sent (the other side's queue full, or too large).
    send_failures: u64,
}

/// How long the bridge waits on one side before looking at the other, when both are
/// quiet.
const BRIDGE_WAIT: Duration = Duration::from_millis(1);

impl Bridge {
    /// Bridges `a` and `b`.
    pub fn open(a: &str, b: &str, opts: &LiveOptions) -> Result<Bridge, CaptureError> {
        Ok(Bridge {
            sides: [
                Interface::open_as(a, opts, true)?,
                Interface::open_as(b, opts, true)?,
            ],
            out: [Sender::open(a)?, Sender::open(b)?],
            last: 0,
            turn: 0,
            send_failures: 0,
        })
    }

    /// The interface the last frame came from.
    pub fn side_name(&self) -> &str {
        &self.sides[self.last].name
    }

    /// The two interfaces.
    pub fn names(&self) -> [&str; 2] {
        [&self.sides[0].name, &self.sides[1].name]
    }

    /// The next frame from either side (they take turns), [`Next::Idle`] after a while
    /// without one.
    pub fn next(&mut self, frame: &mut Frame) -> Result<Next, CaptureError> {
        let start = std::time::Instant::now();
        loop {
            for k in 0..2 {
                let side = (self.turn + k) % 2;
                let s = &mut self.sides[side];
                if s.buffered() || s.fill(Duration::ZERO)? {
                    self.last = side;
                    self.turn = 1 - side;
                    return s.next(frame);
                }
            }
            if start.elapsed() >= IDLE {
                return Ok(Next::Idle);
            }
            // Both quiet: wait a little on one side, then look at both again.
            let side = self.turn;
            self.turn = 1 - side;
            let s = &mut self.sides[side];
            if s.fill(BRIDGE_WAIT)? {
                self.last = side;
                self.turn = 1 - side;
                return s.next(frame);
            }
        }
    }

    /// Sends `frame` (the last one read) out of the other interface. A frame the
    /// kernel refuses (larger than the interface's MTU, or its queue full) is counted in
    /// `send_failures`, as a switch drops what it cannot send.
    pub fn forward(&mut self, frame: &Frame) -> Result<(), CaptureError> {
        if self.out[1 - self.last].send(&frame.data).is_err() {
            self.send_failures += 1;
        }
        Ok(())
    }

    /// Frames that could not be sent on (larger than the interface's MTU, or its queue
    /// full).
    pub fn send_failures(&self) -> u64 {
        self.send_failures
    }

    /// Per side: frames the kernel passed and dropped.
    pub fn kernel_stats(&self) -> Option<(u64, u64)> {
        let a = self.sides[0].kernel_stats()?;
        let b = self.sides[1].kernel_stats()?;
        Some((a.0 + b.0, a.1 + b.1))
    }
}

/// The sending side of one bridged interface: an AF_PACKET socket bound to it, which
/// sends whole frames as they were read (and receives nothing: its protocol is 0).
struct Sender {
    fd: std::os::fd::OwnedFd,
}

impl Sender {
    fn open(name: &str) -> Result<Sender, CaptureError> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let fail = |what: &str| CaptureError {
            file: name.to_string(),
            packet: None,
            message: format!("{what}: {}", std::io::Error::last_os_error()),
        };
        let cname = std::ffi::CString::new(name).map_err(|_| CaptureError {
            file: name.to_string(),
            packet: None,
            message: "an interface name has no NUL byte".into(),
        })?;
        // SAFETY: `cname` is a valid NUL-terminated string for the call's duration.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(fail("no such interface"));
        }
        // SAFETY: a plain system call with constant arguments; the result is checked.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(fail("socket"));
        }
        // SAFETY: `raw` is a descriptor just returned to us and owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_ll is plain old data, for which all zeroes is a valid value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: `sll` is a valid sockaddr_ll and the length passed is its size.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(fail("bind"));
        }
        Ok(Sender { fd })
    }

    fn send(&self, frame: &[u8]) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: `frame` is valid for reads of `frame.len()` bytes for the call.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(())
        }
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

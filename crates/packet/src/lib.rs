//! Captures in, decoded packets, flows and reassembled streams out.
//!
//! The path of a packet through this crate:
//!
//! 1. [`capture::Capture`] reads a frame from a pcap or pcapng file (or several files in
//!    order, as one stream of time) and names the file and packet number in any error.
//! 2. [`decode::Decoder`] strips the link layer, decodes IPv4/IPv6 (reassembling
//!    fragments in [`defrag`]) and the transport header into a [`decode::Packet`]: plain
//!    fields plus the payload's range in the packet's own buffer.
//! 3. [`flow::FlowTable`] finds or creates the packet's flow (keyed on the bidirectional
//!    5-tuple), decides its direction (the SYN sender is the client), tracks the TCP
//!    handshake, and hands TCP payload to the flow's [`reassembly::Reassembler`] for that
//!    direction, which returns the bytes that became in-order.
//!
//! Nothing here knows about rules: a flow carries a user value of the caller's type (the
//! detection engine keeps its flowbits and stream matcher states there).

pub mod capture;
pub mod checksum;
pub mod decode;
pub mod defrag;
pub mod flow;
pub mod reassembly;

pub use capture::{Capture, CaptureError, Frame, FrameSource, Next};
pub use decode::{Decoder, Ip, L4, Packet, Tunnel, VLAN_LAYERS};
pub use flow::{Flow, FlowConfig, FlowTable};
pub use netsieve_wire::{AppEvent, DecodeEvent, Direction, PerDir, StreamEvent};

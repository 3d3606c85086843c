//! Events: what is wrong with a packet's headers (decoder events) or with what a flow's
//! application layer carries (application-layer events), by the names Suricata gives
//! them (rules' `decode-event:ipv6.frag_overlap` and `app-layer-event:dns.z_flag_set`,
//! the anomaly record's `event`).
//!
//! One table per kind: a variant, its name. Only events netsieve raises are listed, so
//! that a rule naming another one is known not to be inspected rather than never
//! matching.

crate::named! {
    /// An application-layer event.
    pub enum AppEvent {
    /// A DNS message that does not parse.
    DnsMalformedData = "dns.malformed_data",
    /// A response sent to the server.
    DnsNotARequest = "dns.not_a_request",
    /// A request sent to the client.
    DnsNotAResponse = "dns.not_a_response",
    /// The header's reserved Z bit is set.
    DnsZFlagSet = "dns.z_flag_set",
    /// An opcode no standard defines (3, or above 6).
    DnsInvalidOpcode = "dns.invalid_opcode",
    /// A name longer than 1025 bytes (logged cut).
    DnsNameTooLong = "dns.name_too_long",
    /// A name of more than 255 labels and pointers.
    DnsTooManyLabels = "dns.too_many_labels",
    /// A name pointer to itself.
    DnsInfiniteLoop = "dns.infinite_loop",
    /// An authority section that does not parse.
    DnsInvalidAuthorities = "dns.invalid_authorities",
    /// An additional section that does not parse.
    DnsInvalidAdditionals = "dns.invalid_additionals",
    /// A request's `Transfer-Encoding` other than `chunked` (libhtp's reading).
    HttpInvalidTransferEncodingValueInRequest = "http.invalid_transfer_encoding_value_in_request",
    /// A request with more than one `Content-Length` header.
    HttpDuplicateContentLengthFieldInRequest = "http.duplicate_content_length_field_in_request",
    /// A request's chunk size line with an extension (`; name=value`).
    HttpRequestChunkExtension = "http.request_chunk_extension",
    /// A request line without a protocol (`GET /`, HTTP/0.9's form).
    HttpRequestLineMissingProtocol = "http.request_line_missing_protocol",
    /// An `Authorization` scheme other than Basic, Digest and Bearer.
    HttpRequestAuthUnrecognized = "http.request_auth_unrecognized",
    /// A request path with a percent-encoded `%` that is followed by two hex digits.
    HttpDoubleEncodedUri = "http.double_encoded_uri",
    /// A response with more content codings than are undone (libhtp's layer limit).
    HttpTooManyEncodingLayers = "http.too_many_encoding_layers",
    /// After a complete request, a line that does not open one (its first word is no
    /// method libhtp knows): libhtp reads it as more of that request's body.
    HttpRequestBodyUnexpected = "http.request_body_unexpected",
    /// An FTP command line longer than the line limit (cut there).
    FtpRequestCommandTooLong = "ftp.request_command_too_long",
    /// An FTP reply line longer than the line limit (cut there).
    FtpResponseCommandTooLong = "ftp.response_command_too_long",
    /// A command while as many as `app-layer.protocols.ftp.max-tx` wait for their
    /// replies: the flow's FTP is read no further.
    FtpTooManyTransactions = "ftp.too_many_transactions",
    /// A MIME boundary longer than 254 bytes (measured on the reference: 255 raises it,
    /// 254 does not).
    SmtpMimeLongBoundary = "smtp.mime_long_boundary",
    /// A client command before the server's `220` welcome (one per command, as the
    /// reference raises it).
    SmtpNoServerWelcomeMessage = "smtp.no_server_welcome_message",
    /// A CONNACK with no CONNECT waiting for it.
    MqttMissingConnect = "mqtt.missing_connect",
    /// A side that does not begin as HTTP/2 does (the client's preface).
    Http2InvalidFrameHeader = "http2.invalid_frame_header",
    /// A frame whose payload is too short for its type or its padding.
    Http2InvalidFrameLength = "http2.invalid_frame_length",
    /// A header block that does not decode, or a CONTINUATION out of place.
    Http2InvalidHeader = "http2.invalid_header",
    /// A frame longer than netsieve reads (skipped).
    Http2LongFrameData = "http2.long_frame_data",
    /// A request whose `:authority` and Host header differ.
    Http2AuthorityHostMismatch = "http2.authority_host_mismatch",
    /// A request whose `:authority` has user information (`user@host`).
    Http2UserinfoInUri = "http2.userinfo_in_uri",
    /// A DNS-over-HTTPS request message over 65,535 bytes (not parsed).
    Http2DnsRequestTooLong = "http2.dns_request_too_long",
    /// A DNS-over-HTTPS response message over 65,535 bytes (not parsed).
    Http2DnsResponseTooLong = "http2.dns_response_too_long",
    /// A PUBACK, PUBREC, PUBREL or PUBCOMP with no PUBLISH of its packet identifier.
    MqttMissingPublish = "mqtt.missing_publish",
    /// A SUBACK with no SUBSCRIBE of its packet identifier.
    MqttMissingSubscribe = "mqtt.missing_subscribe",
    /// An UNSUBACK with no UNSUBSCRIBE of its packet identifier.
    MqttMissingUnsubscribe = "mqtt.missing_unsubscribe",
    /// A second CONNECT.
    MqttDoubleConnect = "mqtt.double_connect",
    /// A packet other than CONNECT or CONNACK before any CONNECT.
    MqttUnintroducedMessage = "mqtt.unintroduced_message",
    /// A PUBLISH of QoS 3.
    MqttInvalidQosLevel = "mqtt.invalid_qos_level",
    /// A packet of type 0.
    MqttUnassignedMsgType = "mqtt.unassigned_msg_type",
    /// A packet that does not parse.
    MqttMalformedTraffic = "mqtt.malformed_traffic",
    /// An SMB write or read of a file's bytes already seen.
    SmbFileOverlap = "smb.file_overlap",
    }
}

crate::named! {
    /// A stream (TCP session tracking and reassembly) event, as rules name it
    /// (`stream-event:…`).
    pub enum StreamEvent {
    /// A direction's first segment with bytes past `stream.reassembly.depth`.
    ReassemblyDepthReached = "reassembly_depth_reached",
    /// A side goes on after sending a RST (which the other side did not honour): the
    /// session goes on from where the RST found it.
    SuspectedRstInject = "suspected_rst_inject",
    /// A client SYN with yet another sequence number while the handshake waits, past
    /// the SYNs kept (Suricata's `stream.max-syn-queued`, 10).
    ThreeWhsSynFlood = "3whs_syn_flood",
    /// A segment whose Timestamps option its receiver would refuse (one answering a SYN
    /// that had none, or echoing no TSval of the SYN's): left out of the session.
    PktInvalidTimestamp = "pkt_invalid_timestamp",
    }
}

crate::named! {
    /// A decoder event.
    pub enum DecodeEvent {
    /// An IPv4 option whose length is below 2 or runs past the header (the packet is
    /// not decoded further), or is wrong for its kind.
    Ipv4OptInvalidLen = "ipv4.opt_invalid_len",
    /// IPv4 options whose length is not a multiple of 8 bytes.
    Ipv4OptPadRequired = "ipv4.opt_pad_required",
    /// A lone byte at the end of the IPv4 options that starts an option (an EOL was
    /// needed).
    Ipv4OptEolRequired = "ipv4.opt_eol_required",
    /// An IPv4 option of a kind Suricata does not know.
    Ipv4OptInvalid = "ipv4.opt_invalid",
    /// An IPv4 option of a known kind seen twice.
    Ipv4OptDuplicate = "ipv4.opt_duplicate",
    /// An IPv4 timestamp or route option whose pointer is before its data.
    Ipv4OptMalformed = "ipv4.opt_malformed",
    /// An IPv4 packet whose total length runs past the bytes captured: not decoded
    /// further (nor is an IPv6 one whose payload length does, `ipv6.trunc_pkt`).
    Ipv4TruncPkt = "ipv4.trunc_pkt",
    Ipv6TruncPkt = "ipv6.trunc_pkt",
    /// A fragment that would end past 65,535 bytes.
    Ipv4FragPktTooLarge = "ipv4.frag_pkt_too_large",
    /// A fragment that overlaps bytes another fragment of its datagram gave.
    Ipv4FragOverlap = "ipv4.frag_overlap",
    /// An extension header that runs past the packet.
    Ipv6TruncExthdr = "ipv6.trunc_exthdr",
    /// A second fragment header in one packet.
    Ipv6ExthdrDuplFh = "ipv6.exthdr_dupl_fh",
    /// A fragment header that fragments nothing (offset 0, no more fragments).
    Ipv6ExthdrUselessFh = "ipv6.exthdr_useless_fh",
    /// A fragment, not the last, whose length is not a multiple of 8.
    Ipv6FragInvalidLength = "ipv6.frag_invalid_length",
    Ipv6FragPktTooLarge = "ipv6.frag_pkt_too_large",
    Ipv6FragOverlap = "ipv6.frag_overlap",
    /// A destination option of a type no standard defines.
    Ipv6DstoptsUnknownOpt = "ipv6.dstopts_unknown_opt",
    /// An Ethernet frame (or a Linux cooked or Cisco HDLC one) whose EtherType Suricata
    /// does not know (measured on the reference: ARP, IP, VLAN tags, PPPoE, MPLS, 802.1ah,
    /// DCE, VN-Tag and NSH are known; LLDP, 802.3 lengths, EAPOL and the rest are not).
    EthernetUnknownEthertype = "ethernet.unknown_ethertype",
    /// An ICMPv4 type Suricata does not know (measured: 0, 3, 4, 5, 8, 9 and 11 to 18
    /// are known; 10, router solicitation, is not).
    Icmpv4UnknownType = "icmpv4.unknown_type",
    /// A code its ICMPv4 type does not define (measured: destination unreachable up to
    /// 15, redirect up to 3, time exceeded up to 1, router advertisement any, the others
    /// 0).
    Icmpv4UnknownCode = "icmpv4.unknown_code",
    /// Fewer than 20 bytes where a TCP header should be.
    TcpPktTooSmall = "tcp.pkt_too_small",
    /// A TCP data offset below 5 words, or past the segment.
    TcpHlenTooSmall = "tcp.hlen_too_small",
    /// Fewer than 8 bytes where a UDP header should be.
    UdpHlenTooSmall = "udp.hlen_too_small",
    /// A UDP length field that disagrees with the IP payload's length.
    UdpLenInvalid = "udp.len_invalid",
    /// Fewer than 4 bytes where a GRE header should be.
    GrePktTooSmall = "gre.pkt_too_small",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &e in DecodeEvent::ALL {
            assert_eq!(DecodeEvent::by_name(e.name()), Some(e));
        }
        assert_eq!(DecodeEvent::by_name("ipv6.nope"), None);
        for &e in AppEvent::ALL {
            assert_eq!(AppEvent::by_name(e.name()), Some(e));
        }
    }
}

//! Frames: the records an application-layer parser finds in a stream (a TLS record, an
//! SMB 2 message, an HTTP request), by the names Suricata gives them. A rule's
//! `frame:tls.pdu` inspects the bytes of each such record; the parsers mark where they
//! lie.
//!
//! One table: a variant, its name as `protocol.type`. Only frames netsieve's parsers
//! mark are listed, so that a rule naming another one is known not to be inspected
//! rather than never matching.

crate::named! {
    /// A kind of frame, by protocol.
    pub enum FrameType {
    /// An HTTP/1 request: its line, headers and body.
    Http1Request = "http1.request",
    /// An HTTP/1 response: its line, headers and body.
    Http1Response = "http1.response",
    /// A TLS record: its 5-byte header and its fragment.
    TlsPdu = "tls.pdu",
    TlsHdr = "tls.hdr",
    TlsData = "tls.data",
    /// An SSH binary packet after the banner: its 6-byte header (length, padding
    /// length, message code) and what follows.
    SshRecordPdu = "ssh.record.pdu",
    SshRecordHdr = "ssh.record.hdr",
    SshRecordData = "ssh.record.data",
    /// An SMB 2/3 message without its NetBIOS header: its 64-byte header and body.
    SmbSmb2Pdu = "smb.smb2.pdu",
    SmbSmb2Hdr = "smb.smb2.hdr",
    SmbSmb2Data = "smb.smb2.data",
    /// A DCE/RPC PDU over TCP: its 16-byte common header and what follows.
    DcerpcPdu = "dcerpc.pdu",
    DcerpcHdr = "dcerpc.hdr",
    DcerpcData = "dcerpc.data",
    /// An MQTT control packet: its fixed header (type byte and remaining length) and
    /// the rest.
    MqttPdu = "mqtt.pdu",
    MqttHeader = "mqtt.header",
    MqttData = "mqtt.data",
    /// A SIP message, and its start line, headers (to the last header's line end) and
    /// body (after the empty line).
    SipPdu = "sip.pdu",
    SipRequestLine = "sip.request.line",
    SipRequestHeaders = "sip.request.headers",
    SipRequestBody = "sip.request.body",
    SipResponseLine = "sip.response.line",
    SipResponseHeaders = "sip.response.headers",
    SipResponseBody = "sip.response.body",
    /// A WebSocket frame: its header (2 to 14 bytes) and payload (as sent: masked).
    WebsocketPdu = "websocket.pdu",
    WebsocketHeader = "websocket.header",
    WebsocketData = "websocket.data",
    }
}

impl FrameType {
    /// The protocol part of its name (`tls`, `http1`).
    pub fn protocol(self) -> &'static str {
        self.name().split_once('.').map_or("", |(p, _)| p)
    }

    /// Its name without the protocol (`pdu`, `smb2.hdr`), as Suricata's records write
    /// it.
    pub fn short(self) -> &'static str {
        self.name().split_once('.').map_or("", |(_, t)| t)
    }

    /// The frame a rule's `frame:` names, in a rule whose header names protocol
    /// `proto` (`tcp`, `tls`, `http`): the full name (`tls.pdu`), or the type alone for
    /// the header's protocol (`pdu`).
    pub fn of_rule(name: &str, proto: &str) -> Option<FrameType> {
        let proto = match proto {
            "http" => "http1",
            p => p,
        };
        FrameType::by_name(name).or_else(|| FrameType::by_name(&format!("{proto}.{name}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_with_or_without_the_protocol() {
        assert_eq!(
            FrameType::of_rule("http1.request", "tcp"),
            Some(FrameType::Http1Request)
        );
        assert_eq!(
            FrameType::of_rule("response", "http"),
            Some(FrameType::Http1Response)
        );
        assert_eq!(
            FrameType::of_rule("smb2.pdu", "smb"),
            Some(FrameType::SmbSmb2Pdu)
        );
        assert_eq!(FrameType::of_rule("pdu", "tcp"), None);
        assert_eq!(FrameType::of_rule("nope", "tls"), None);
        for &t in FrameType::ALL {
            assert_eq!(FrameType::of_rule(t.short(), t.protocol()), Some(t));
            assert!(!t.short().is_empty() && !t.protocol().is_empty());
        }
    }
}

//! WebSocket's names for its opcodes (RFC 6455 5.2), shared by the rules that name them
//! (`websocket.opcode:ping`) and the logs that write them.

/// Opcodes by name, as `websocket.opcode` reads them and EVE writes them (`close` is
/// read too, as `connection_close`).
pub const OPCODES: &[(&str, u8)] = &[
    ("continuation", 0),
    ("text", 1),
    ("binary", 2),
    ("connection_close", 8),
    ("ping", 9),
    ("pong", 10),
];

/// An opcode's name (its number when it has none).
pub fn opcode_name(op: u8) -> String {
    match OPCODES.iter().find(|(_, o)| *o == op) {
        Some((n, _)) => (*n).to_string(),
        None => op.to_string(),
    }
}

/// The opcode a name (any case) stands for.
pub fn opcode_by_name(name: &str) -> Option<u8> {
    let name = if name.eq_ignore_ascii_case("close") {
        "connection_close"
    } else {
        name
    };
    OPCODES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, o)| *o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for &(n, o) in OPCODES {
            assert_eq!(opcode_by_name(n), Some(o));
            assert_eq!(opcode_name(o), n);
        }
        assert_eq!(opcode_by_name("CLOSE"), Some(8));
        assert_eq!(opcode_name(3), "3");
    }
}

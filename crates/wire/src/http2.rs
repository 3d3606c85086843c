//! HTTP/2's names for its numbers, shared by the rules that name them and the logs
//! that write them.

/// The names of frame types 0 to 9 (`http2.frametype:GOAWAY`).
pub const FRAME_TYPES: [&str; 10] = [
    "DATA",
    "HEADERS",
    "PRIORITY",
    "RST_STREAM",
    "SETTINGS",
    "PUSH_PROMISE",
    "PING",
    "GOAWAY",
    "WINDOW_UPDATE",
    "CONTINUATION",
];

/// The names of error codes 0 to 13 (`http2.errorcode:INTERNAL_ERROR`).
pub const ERROR_CODES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

/// The names of settings 1 to 6 (`http2.settings:SETTINGS_MAX_FRAME_SIZE`).
pub const SETTINGS: [&str; 6] = [
    "SETTINGS_HEADER_TABLE_SIZE",
    "SETTINGS_ENABLE_PUSH",
    "SETTINGS_MAX_CONCURRENT_STREAMS",
    "SETTINGS_INITIAL_WINDOW_SIZE",
    "SETTINGS_MAX_FRAME_SIZE",
    "SETTINGS_MAX_HEADER_LIST_SIZE",
];

/// The number named by `name` in `names` (index plus `first`), in any case, or a
/// number as given.
pub fn number_of(names: &[&str], first: u32, name: &str) -> Option<u32> {
    let name = name.trim();
    names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(name))
        .map(|i| i as u32 + first)
        .or_else(|| name.parse().ok())
}

/// EVE's spelling of a name: upper case without underscores (`SETTINGSMAXFRAMESIZE`,
/// `INTERNALERROR`), or the number of one without a name.
pub fn eve_name(names: &[&str], first: u32, n: u32) -> String {
    match n.checked_sub(first).and_then(|i| names.get(i as usize)) {
        Some(name) => name.replace('_', ""),
        None => n.to_string(),
    }
}

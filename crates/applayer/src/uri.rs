//! The normalised request URI (`http.uri`): what a server would take the raw target
//! (`http.uri.raw`) to mean.
//!
//! The path is percent-decoded (valid `%XX` only), `\` is read as `/`, repeated
//! slashes are collapsed and `.` and `..` segments removed (RFC 3986 5.2.4); the query
//! and fragment are percent-decoded too (measured on Suricata 8: `data=%7Dk` is matched
//! by `http.uri; content:"data=}k"`). An absolute-form target (`http://host/path`) keeps
//! its scheme and authority and has its path normalised.

/// Normalises a raw request target.
pub fn normalize(raw: &[u8]) -> Vec<u8> {
    // Split off the scheme and authority of an absolute-form target.
    let (prefix, rest) = match find(raw, b"://") {
        Some(i) if raw[..i].iter().all(|c| c.is_ascii_alphabetic()) => {
            let after = i + 3;
            let path_at = raw[after..]
                .iter()
                .position(|&c| c == b'/')
                .map_or(raw.len(), |p| after + p);
            (&raw[..path_at], &raw[path_at..])
        }
        _ => (&raw[..0], raw),
    };
    let q = rest
        .iter()
        .position(|&c| c == b'?' || c == b'#')
        .unwrap_or(rest.len());
    let (path, query) = rest.split_at(q);
    let decoded = percent_decode(path);
    let mut out = prefix.to_vec();
    out.extend_from_slice(&remove_dots(&decoded));
    out.extend_from_slice(&percent_decode(query));
    out
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// `%XX` to its byte; anything else as it is.
pub fn percent_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%'
            && let (Some(h), Some(l)) = (
                s.get(i + 1).copied().and_then(hex),
                s.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// Collapses separators and removes dot segments from a path.
fn remove_dots(path: &[u8]) -> Vec<u8> {
    let path: Vec<u8> = path
        .iter()
        .map(|&c| if c == b'\\' { b'/' } else { c })
        .collect();
    let absolute = path.first() == Some(&b'/');
    let trailing =
        path.len() > 1 && (path.ends_with(b"/") || path.ends_with(b"/.") || path.ends_with(b"/.."));
    let mut segs: Vec<&[u8]> = Vec::new();
    for seg in path.split(|&c| c == b'/') {
        match seg {
            b"" | b"." => {}
            b".." => {
                segs.pop();
            }
            s => segs.push(s),
        }
    }
    let mut out = Vec::with_capacity(path.len());
    if absolute {
        out.push(b'/');
    }
    for (i, s) in segs.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(s);
    }
    if trailing && !segs.is_empty() {
        out.push(b'/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_paths_and_decodes_queries() {
        let n = |s: &str| String::from_utf8(normalize(s.as_bytes())).unwrap();
        assert_eq!(n("/a/b/../c/./d"), "/a/c/d");
        assert_eq!(n("//a///b"), "/a/b");
        assert_eq!(n("/%2e%2e/etc/passwd"), "/etc/passwd");
        // The query is percent-decoded, its dots left (Suricata 8 matches
        // `data=%7Dk` as `data=}k`).
        assert_eq!(n("/a%20b?x=%41&y=../z"), "/a b?x=A&y=../z");
        assert_eq!(n("/dir/"), "/dir/");
        assert_eq!(n("/a\\b\\..\\c"), "/a/c");
        assert_eq!(n("/%zz%4"), "/%zz%4");
        assert_eq!(n("http://Host:8080/a/../b?q"), "http://Host:8080/b?q");
        assert_eq!(n("*"), "*");
        assert_eq!(n("/"), "/");
        assert_eq!(n(""), "");
    }
}

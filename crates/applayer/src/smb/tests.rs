use super::*;

const C: Direction = Direction::ToServer;
const S: Direction = Direction::ToClient;

fn nbss(msg: &[u8]) -> Vec<u8> {
    let mut r = vec![0, 0, 0, 0];
    r[1..4].copy_from_slice(&(msg.len() as u32).to_be_bytes()[1..]);
    r.extend_from_slice(msg);
    r
}

fn utf16le(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// An SMB 2 message: header (response when `status` is given) and body.
fn smb2(command: u16, msg_id: u64, tree: u32, status: Option<u32>, body: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 64];
    h[..4].copy_from_slice(b"\xfeSMB");
    h[4] = 64;
    h[8..12].copy_from_slice(&status.unwrap_or(0).to_le_bytes());
    h[12..14].copy_from_slice(&command.to_le_bytes());
    h[16..20].copy_from_slice(&u32::from(status.is_some()).to_le_bytes());
    h[24..32].copy_from_slice(&msg_id.to_le_bytes());
    h[36..40].copy_from_slice(&tree.to_le_bytes());
    h.extend_from_slice(body);
    nbss(&h)
}

fn tree_connect(path: &str) -> Vec<u8> {
    let p = utf16le(path);
    let mut b = vec![9, 0, 0, 0];
    b.extend_from_slice(&72u16.to_le_bytes());
    b.extend_from_slice(&(p.len() as u16).to_le_bytes());
    b.extend_from_slice(&p);
    b
}

fn tree_connect_answer(share_type: u8) -> Vec<u8> {
    let mut b = vec![16, 0, share_type, 0];
    b.extend_from_slice(&[0; 12]);
    b
}

fn create(name: &str) -> Vec<u8> {
    let n = utf16le(name);
    let mut b = vec![0u8; 56];
    b[0] = 57;
    b[44..46].copy_from_slice(&120u16.to_le_bytes());
    b[46..48].copy_from_slice(&(n.len() as u16).to_le_bytes());
    b.extend_from_slice(&n);
    b
}

fn create_answer(fid: u8) -> Vec<u8> {
    let mut b = vec![0u8; 88];
    b[0] = 89;
    b[64..80].copy_from_slice(&[fid; 16]);
    b
}

fn write(fid: u8, offset: u64, data: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; 48];
    b[0] = 49;
    b[2..4].copy_from_slice(&112u16.to_le_bytes());
    b[4..8].copy_from_slice(&(data.len() as u32).to_le_bytes());
    b[8..16].copy_from_slice(&offset.to_le_bytes());
    b[16..32].copy_from_slice(&[fid; 16]);
    b.extend_from_slice(data);
    b
}

fn close(fid: u8) -> Vec<u8> {
    let mut b = vec![0u8; 24];
    b[0] = 24;
    b[8..24].copy_from_slice(&[fid; 16]);
    b
}

/// A DCE/RPC request PDU (little-endian) for operation `opnum`.
fn rpc_request(opnum: u16) -> Vec<u8> {
    let mut p = vec![5, 0, 0, 3, 0x10, 0, 0, 0, 28, 0, 0, 0, 9, 0, 0, 0];
    p.extend_from_slice(&[4, 0, 0, 0, 0, 0]);
    p.extend_from_slice(&opnum.to_le_bytes());
    p.extend_from_slice(b"stub");
    p
}

#[test]
fn smb2_share_pipe_file_and_rpc() {
    let mut s = Smb::default();
    // A share, then the IPC$ pipe tree.
    s.feed(C, &smb2(3, 1, 0, None, &tree_connect("\\\\srv\\docs")));
    s.feed(S, &smb2(3, 1, 5, Some(0), &tree_connect_answer(1)));
    s.feed(C, &smb2(3, 2, 0, None, &tree_connect("\\\\srv\\IPC$")));
    s.feed(S, &smb2(3, 2, 6, Some(0), &tree_connect_answer(2)));
    let shares: Vec<_> = s
        .txs
        .iter()
        .map(|t| match &t.kind {
            Kind::TreeConnect { share, pipe } => (share.clone(), *pipe),
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(
        shares,
        [
            (b"\\\\srv\\docs".to_vec(), Some(false)),
            (b"\\\\srv\\IPC$".to_vec(), Some(true))
        ]
    );
    // A file on the share: written in two pieces, then closed.
    s.feed(C, &smb2(5, 3, 5, None, &create("a.txt")));
    s.feed(S, &smb2(5, 3, 5, Some(0), &create_answer(7)));
    // Both writes in one segment; the record split across feeds.
    let mut both = smb2(9, 4, 5, None, &write(7, 0, b"hello "));
    both.extend(smb2(9, 5, 5, None, &write(7, 6, b"world")));
    s.feed(C, &both[..30]);
    s.feed(C, &both[30..]);
    let f = s.txs.iter().find_map(Tx::file).unwrap();
    assert_eq!(
        (&f.name[..], &f.data[..], f.closed),
        (&b"a.txt"[..], &b"hello world"[..], false)
    );
    s.feed(C, &smb2(6, 6, 5, None, &close(7)));
    assert!(s.txs.iter().find_map(Tx::file).unwrap().closed);
    // A pipe on IPC$: its writes are DCE/RPC.
    s.feed(C, &smb2(5, 7, 6, None, &create("spoolss")));
    s.feed(S, &smb2(5, 7, 6, Some(0), &create_answer(8)));
    s.feed(C, &smb2(9, 8, 6, None, &write(8, 0, &rpc_request(42))));
    let rpc = s
        .txs
        .iter()
        .find(|t| matches!(t.kind, Kind::Rpc { .. }))
        .unwrap();
    let call = s.call(rpc).unwrap();
    assert_eq!(
        (call.opnum, &call.request.stub[..]),
        (Some(42), &b"stub"[..])
    );
    // No file transaction for the pipe.
    assert_eq!(s.txs.iter().filter_map(Tx::file).count(), 1);
}

#[test]
fn ntlmssp_user_and_domain() {
    let user = utf16le("alice");
    let domain = utf16le("CORP");
    let mut m = b"NTLMSSP\0".to_vec();
    m.extend_from_slice(&3u32.to_le_bytes());
    m.resize(72, 0);
    let at = 72u32;
    m[28..30].copy_from_slice(&(domain.len() as u16).to_le_bytes());
    m[32..36].copy_from_slice(&at.to_le_bytes());
    m[36..38].copy_from_slice(&(user.len() as u16).to_le_bytes());
    m[40..44].copy_from_slice(&(at + domain.len() as u32).to_le_bytes());
    m[48..52].copy_from_slice(&(at + 20).to_le_bytes());
    m[60..64].copy_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&domain);
    m.extend_from_slice(&user);
    let mut blob = b"\xa1\x82spnego".to_vec();
    blob.extend_from_slice(&m);
    let n = Ntlmssp::find(&blob).unwrap();
    assert_eq!((&n.user[..], &n.domain[..]), (&b"alice"[..], &b"CORP"[..]));
    assert_eq!(Ntlmssp::find(b"NTLMSSP\0\x01\0\0\0"), None);
}

#[test]
fn smb1_tree_create_and_andx_write() {
    // A header: command, reply or not, unicode, tid, pid 1, mid.
    fn smb1(cmd: u8, reply: bool, tid: u16, mid: u16) -> Vec<u8> {
        let mut h = vec![0u8; 32];
        h[..4].copy_from_slice(b"\xffSMB");
        h[4] = cmd;
        h[9] = if reply { 0x80 } else { 0 };
        h[24..26].copy_from_slice(&tid.to_le_bytes());
        h[26..28].copy_from_slice(&1u16.to_le_bytes());
        h[30..32].copy_from_slice(&mid.to_le_bytes());
        h
    }
    let mut s = Smb::default();
    // TREE_CONNECT_ANDX: no AndX, password of one byte, ASCII path, service.
    let mut m = smb1(v1::cmd::TREE_CONNECT_ANDX, false, 0, 1);
    m.extend_from_slice(&[4, 0xff, 0, 0, 0, 0, 0, 1, 0]);
    let bytes = b"\0\\\\SRV\\PUBLIC\0?????\0";
    m.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    m.extend_from_slice(bytes);
    s.feed(C, &nbss(&m));
    let mut m = smb1(v1::cmd::TREE_CONNECT_ANDX, true, 9, 1);
    m.extend_from_slice(&[3, 0xff, 0, 0, 0, 0, 0, 3, 0]);
    m.extend_from_slice(b"A:\0");
    s.feed(S, &nbss(&m));
    assert_eq!(
        s.txs[0].kind,
        Kind::TreeConnect {
            share: b"\\\\SRV\\PUBLIC".to_vec(),
            pipe: Some(false)
        }
    );
    // NT_CREATE_ANDX "\\eicar", answered with FID 0x4001.
    let mut m = smb1(v1::cmd::NT_CREATE_ANDX, false, 9, 2);
    let mut w = vec![0u8; 48];
    w[0] = 0xff;
    w[5..7].copy_from_slice(&6u16.to_le_bytes());
    m.push(24);
    m.extend_from_slice(&w);
    m.extend_from_slice(&7u16.to_le_bytes());
    m.extend_from_slice(b"\\eicar\0");
    s.feed(C, &nbss(&m));
    let mut m = smb1(v1::cmd::NT_CREATE_ANDX, true, 9, 2);
    let mut w = vec![0u8; 68];
    w[0] = 0xff;
    w[5..7].copy_from_slice(&0x4001u16.to_le_bytes());
    m.push(34);
    m.extend_from_slice(&w);
    m.extend_from_slice(&0u16.to_le_bytes());
    s.feed(S, &nbss(&m));
    // WRITE_ANDX of 5 bytes at offset 0 (data right after the byte count).
    let mut m = smb1(v1::cmd::WRITE_ANDX, false, 9, 3);
    let mut w = vec![0u8; 24];
    w[0] = 0xff;
    w[4..6].copy_from_slice(&0x4001u16.to_le_bytes());
    w[20..22].copy_from_slice(&5u16.to_le_bytes());
    let data_at = 32 + 1 + 24 + 2;
    w[22..24].copy_from_slice(&(data_at as u16).to_le_bytes());
    m.push(12);
    m.extend_from_slice(&w);
    m.extend_from_slice(&5u16.to_le_bytes());
    m.extend_from_slice(b"X5O!P");
    s.feed(C, &nbss(&m));
    let f = s.txs.iter().find_map(Tx::file).unwrap();
    assert_eq!((&f.name[..], &f.data[..]), (&b"\\eicar"[..], &b"X5O!P"[..]));
    assert!(s.txs.iter().all(|t| t.version == 1));
}

#[test]
fn a_write_at_the_end_of_the_offset_range_does_not_overflow() {
    let mut s = Smb::default();
    s.feed(C, &smb2(9, 1, 5, None, &write(7, u64::MAX - 2, b"abcdef")));
    let f = s.txs.iter().find_map(Tx::file).unwrap();
    assert_eq!((f.size, &f.data[..]), (u64::MAX, &b"abcdef"[..]));
}

#[test]
fn garbage_and_huge_records_stay_bounded() {
    let mut s = Smb::default();
    // A record claiming more than the limit is skipped, and the next one read.
    let mut big = vec![0, 0x7f, 0xff, 0xff];
    s.feed(C, &big);
    big = vec![0; 1000];
    s.feed(C, &big);
    assert!(s.held[C].is_empty() && s.skip[C] > 0);
    // Not a session record: the direction is read no further.
    let mut t = Smb::default();
    assert!(!t.feed(C, b"GET / HTTP/1.1\r\n\r\n"));
    assert!(!t.feed(C, &smb2(3, 1, 0, None, &tree_connect("x"))));
    assert!(t.txs.is_empty());
    // Truncated and lying structures read as what they hold.
    let mut u = Smb::default();
    for n in 0..80 {
        let mut m = smb2(5, 1, 0, None, &[0xff; 200]);
        m.truncate(4 + n);
        let len = (n as u32).to_be_bytes();
        m[1..4].copy_from_slice(&len[1..]);
        u.feed(C, &m);
        u.feed(S, &m);
    }
}

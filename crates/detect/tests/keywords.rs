//! Payload keywords whose edge cases Suricata defines precisely, one rule at a time over
//! short buffers (cases from suricata-verify issue-8031-01-isdataat and
//! detect-bytejump-05).

use netsieve_detect::eval::{Ctx, compile_list, matches};
use netsieve_rules::{Vars, parse_rule};

fn hits(options: &str, buf: &[u8]) -> bool {
    let rule = parse_rule(
        &format!("alert tcp any any -> any any ({options} sid:1;)"),
        &Vars::default(),
    )
    .unwrap();
    let list = &rule.payload_lists().next().expect("a payload list").matches;
    let compiled = compile_list(list, &mut Vec::new()).unwrap();
    matches(&compiled, buf, &mut Ctx::default())
}

#[test]
fn isdataat_absolute_needs_a_byte_at_the_offset() {
    let buf = [b'a'; 32];
    assert!(hits("isdataat:31;", &buf));
    assert!(!hits("isdataat:32;", &buf));
    assert!(hits("isdataat:!32;", &buf));
}

#[test]
fn isdataat_relative_needs_that_many_bytes_after_the_pointer() {
    let buf = [b'a'; 32];
    // Without a previous match the pointer is 0: 32 more bytes fit in 32.
    assert!(hits("isdataat:32,relative;", &buf));
    assert!(!hits("isdataat:33,relative;", &buf));
    // After "a" at 0 the pointer is 1.
    assert!(hits("content:\"a\"; depth:1; isdataat:31,relative;", &buf));
    assert!(!hits("content:\"a\"; depth:1; isdataat:32,relative;", &buf));
    // The ET idiom for "nothing follows": true only at the very end.
    assert!(hits("content:\"xyz\"; isdataat:!1,relative;", b"abcxyz"));
    assert!(!hits("content:\"xyz\"; isdataat:!1,relative;", b"abcxyz!"));
}

#[test]
fn byte_jump_before_the_buffer_start_lands_on_the_start() {
    let buf = b"\x0a\x95\x00\x20NSLO and more";
    assert!(hits(
        "content:\"|0A 95 00 20|\"; byte_jump:0,0,relative,post_offset -8; pcre:\"/NSLO/R\";",
        buf
    ));
    assert!(hits(
        "content:\"|0A 95 00 20|\"; byte_jump:0,0,relative,post_offset -10; pcre:\"/^\\x0a\\x95/R\";",
        buf
    ));
    // Past the end still fails.
    assert!(!hits(
        "content:\"|0A 95 00 20|\"; byte_jump:0,0,relative,post_offset 100;",
        buf
    ));
}

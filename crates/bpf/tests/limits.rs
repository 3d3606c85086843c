//! Expressions built to exhaust the compiler: deep nesting, long chains, huge texts. Each
//! must compile or be refused with a clear error, never overflow the stack.

use netsieve_bpf::{LinkType, MAX_NESTING, compile};

fn nested(n: usize) -> String {
    format!("{}tcp{}", "(".repeat(n), ")".repeat(n))
}

#[test]
fn nesting_up_to_the_limit_compiles_and_past_it_is_refused() {
    let tcp = compile("tcp", LinkType::Ethernet).unwrap();
    assert_eq!(
        compile(&nested(MAX_NESTING), LinkType::Ethernet)
            .unwrap()
            .insns(),
        tcp.insns()
    );
    for n in [MAX_NESTING + 1, 3000, 100_000] {
        let e = compile(&nested(n), LinkType::Ethernet).unwrap_err();
        assert!(e.reason.contains("nested more than"), "{e}");
    }
    // Brackets and unary minus nest too.
    let idx = format!("{}0{} = 1", "ip[".repeat(3000), "]".repeat(3000));
    assert!(
        compile(&idx, LinkType::Ethernet)
            .unwrap_err()
            .reason
            .contains("nested")
    );
    let neg = format!("ip[{}1] = 1", "-".repeat(5000));
    assert!(
        compile(&neg, LinkType::Ethernet)
            .unwrap_err()
            .reason
            .contains("nested")
    );
    let arith = format!("ip[0] = {}1{}", "(".repeat(3000), ")".repeat(3000));
    assert!(
        compile(&arith, LinkType::Ethernet)
            .unwrap_err()
            .reason
            .contains("nested")
    );
}

#[test]
fn long_chains_do_not_nest() {
    // `not` repeated: its parity counts.
    let tcp = compile("tcp", LinkType::Ethernet).unwrap();
    let nots = format!("{}tcp", "not ".repeat(20_000));
    assert_eq!(
        compile(&nots, LinkType::Ethernet).unwrap().insns(),
        tcp.insns()
    );
    // A run of one operator is a balanced tree: as long as the program fits, it compiles.
    let ors: Vec<String> = (1..=100).map(|p| format!("port {p}")).collect();
    let flat = ors.join(" or ");
    let left = (1..ors.len()).fold(ors[0].clone(), |acc, i| format!("({acc}) or {}", ors[i]));
    let prog = compile(&flat, LinkType::Ethernet).unwrap();
    assert_eq!(
        prog.insns(),
        compile(&left, LinkType::Ethernet).unwrap().insns()
    );
    // Ten thousand terms: compiled or refused, never a crash.
    let huge: Vec<String> = (0..10_000).map(|p| format!("port {p}")).collect();
    let _ = compile(&huge.join(" or "), LinkType::Ethernet);
    let _ = compile(&huge.join(" and "), LinkType::Ethernet);
    // Alternating operators nest the tree: refused past the limit.
    let alt: String = (0..2 * MAX_NESTING)
        .map(|i| format!("port {i} {} ", if i % 2 == 0 { "and" } else { "or" }))
        .collect::<String>()
        + "port 1";
    assert!(
        compile(&alt, LinkType::Ethernet)
            .unwrap_err()
            .reason
            .contains("nested")
    );
}

#[test]
fn errors_on_huge_expressions_quote_only_the_place() {
    let huge: Vec<String> = (0..10_000).map(|p| format!("port {p}")).collect();
    let text = huge.join(" or ") + " or (";
    let e = compile(&text, LinkType::Ethernet).unwrap_err();
    let msg = e.in_expr(&text);
    assert!(msg.len() < 300, "{} bytes: {msg}", msg.len());
    assert!(msg.contains("port 9999 or ("), "{msg}");
    // A short expression is quoted whole.
    let e = compile("tcp and (", LinkType::Ethernet).unwrap_err();
    assert!(
        e.in_expr("tcp and (").ends_with("in `tcp and (`"),
        "{}",
        e.in_expr("tcp and (")
    );
}

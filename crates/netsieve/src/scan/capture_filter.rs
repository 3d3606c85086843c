//! `--bpf EXPR`: a capture filter in tcpdump syntax, as Suricata takes one. Packets it
//! rejects are not inspected or counted.

use netsieve_packet::Frame;

/// `--bpf`: the expression compiled per link type as frames of each type arrive.
pub(super) struct CaptureFilter {
    expr: String,
    by_link: Vec<(u32, netsieve_bpf::Filter)>,
}

impl CaptureFilter {
    /// Checks the expression up front: it must compile for at least one link type.
    pub fn new(expr: &str) -> Result<CaptureFilter, String> {
        use netsieve_bpf::LinkType::*;
        let tries = [Ethernet, Raw, LinuxSll].map(|l| netsieve_bpf::compile(expr, l));
        if let Some(Err(e)) = tries
            .iter()
            .find(|t| t.is_err())
            .filter(|_| tries.iter().all(|t| t.is_err()))
        {
            return Err(format!("--bpf: {}", e.in_expr(expr)));
        }
        Ok(CaptureFilter {
            expr: expr.to_string(),
            by_link: Vec::new(),
        })
    }

    pub fn accepts(&mut self, frame: &Frame) -> Result<bool, String> {
        let lt = frame.linktype;
        let f = match self.by_link.iter().position(|(l, _)| *l == lt) {
            Some(i) => &self.by_link[i].1,
            None => {
                let link = netsieve_bpf::LinkType::from_linktype(lt).ok_or_else(|| {
                    format!("--bpf: capture filters are not supported on link type {lt}")
                })?;
                let p = netsieve_bpf::compile(&self.expr, link)
                    .map_err(|e| format!("--bpf: {}", e.in_expr(&self.expr)))?;
                self.by_link.push((lt, netsieve_bpf::Filter::new(&p)));
                &self.by_link[self.by_link.len() - 1].1
            }
        };
        Ok(f.run(&frame.data, frame.orig_len) != 0)
    }
}

//! The live sources the commands share: an interface (`-i`), two interfaces bridged
//! inline (`--inline A:B`) and a netfilter queue (`-q N`), opened from their flags.

use netsieve_packet::FrameSource;

/// The live-source flags of a command.
pub struct LiveArgs<'a> {
    pub interface: Option<&'a str>,
    pub inline: Option<&'a str>,
    pub queue: Option<u16>,
    /// A capture filter, attached to an interface's socket (the kernel runs it).
    pub bpf: Option<&'a str>,
}

/// The live source the flags name, or `None` when they name none (capture files).
pub fn open(a: &LiveArgs) -> Result<Option<FrameSource>, String> {
    #[cfg(target_os = "linux")]
    {
        use netsieve_packet::capture::{Bridge, Interface, LiveOptions, NfQueue};
        let mut opts = LiveOptions {
            promiscuous: true,
            filter: None,
        };
        if let Some(pair) = a.inline {
            let Some((x, y)) = pair
                .split_once(':')
                .filter(|(x, y)| !x.is_empty() && !y.is_empty())
            else {
                return Err(format!(
                    "--inline {pair}: expected two interfaces, IFACE_A:IFACE_B"
                ));
            };
            let b = Bridge::open(x, y, &opts).map_err(|e| e.to_string())?;
            return Ok(Some(FrameSource::Inline(b)));
        }
        if let Some(n) = a.queue {
            let q = NfQueue::open(n).map_err(|e| e.to_string())?;
            return Ok(Some(FrameSource::Queue(q)));
        }
        let Some(iface) = a.interface else {
            return Ok(None);
        };
        if let Some(expr) = a.bpf {
            let prog = netsieve_bpf::compile(expr, netsieve_bpf::LinkType::Ethernet)
                .map_err(|e| format!("--bpf: {}", e.in_expr(expr)))?;
            let insns = prog.insns().iter().map(|i| (i.code, i.jt, i.jf, i.k));
            opts.filter = Some(insns.collect());
        }
        let i = Interface::open(iface, &opts).map_err(|e| e.to_string())?;
        Ok(Some(FrameSource::Live(i)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        match (a.interface, a.inline, a.queue) {
            (None, None, None) => Ok(None),
            _ => Err("live capture, inline mode and NFQUEUE are only available on Linux".into()),
        }
    }
}

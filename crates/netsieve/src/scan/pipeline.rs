//! The scan pipeline: a [`Reader`] takes frames from a source and decodes them, a
//! [`Pool`] of workers tracks flows and runs detection, and the workers' alerts and
//! flow records reach the [`Emitter`] merged in packet order.
//!
//! ```text
//! source (capture files) -> Reader: --bpf, decode, checksums, tunnels, sweeps
//!     -> Pool: one Worker here, or N: one here and N - 1 on threads (a flow always
//!        on the same one)
//!     -> merge in packet order -> Emitter: thresholds -> sinks (eve.json, fast.log)
//! ```
//!
//! One worker is a pool of one that runs on the reading thread. With more, the reader
//! splits chunks of packets by the hash of their flow's hosts, sends the threads their
//! shares and inspects its own, and each chunk's alerts are merged when every worker has
//! answered for it. Either way the same [`Out::deliver`] hands them on.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use netsieve_detect::log::AppName;
use netsieve_detect::{Alert, Counts, DetectOptions, Detector, FlowData, Profile, RuleSet};
use netsieve_packet::decode::decodes_link;
use netsieve_packet::flow::{Flow, FlowConfig, FlowStats, FlowTable, SweepClock};
use netsieve_packet::{DecodeEvent, Decoder, Direction, Frame, FrameSource, Next, Packet};
use netsieve_rules::ThresholdConfig;

use super::capture_filter::CaptureFilter;
use super::control::{Control, Counters, Order};
use super::eve::{AppCounts, DecodeRecord, DropRecord, FlowRecord, Record, TaggedRecord};
use super::sink::Emitter;
use super::summary::Periodic;
use crate::interrupt::Interrupt;

/// One detection worker: a flow table and a detector.
struct Worker {
    flows: FlowTable<FlowData>,
    det: Detector,
    /// Time in the flow table (tracking and reassembly), when profiling.
    flow_time: Duration,
    /// The records made besides alerts.
    records: Records,
    /// What the flows ended so far add up to.
    ended: Ended,
}

/// What the flows that ended add up to, for the `stats` record.
#[derive(Clone, Debug, Default)]
pub(super) struct Ended {
    /// Holes the TCP streams skipped (Suricata's `tcp.reassembly_gap`).
    pub gaps: u64,
    /// Suricata's `app_layer.flow` and `app_layer.tx`.
    pub app: AppCounts,
}

impl Ended {
    fn flow(&mut self, f: &Flow<FlowData>) {
        if f.proto() == 6 {
            self.gaps += Direction::BOTH
                .iter()
                .map(|&d| f.stream(d).gaps())
                .sum::<u64>();
        }
        let app = match f.user.app_proto() {
            Some(AppName::Proto(p)) => Some(p),
            Some(AppName::Failed) => None,
            None => return,
        };
        let c = self.app.entry((app, f.proto())).or_default();
        c.0 += 1;
        c.1 += f.user.tx_count();
    }

    fn add(&mut self, other: Ended) {
        self.gaps += other.gaps;
        for (k, (flows, txs)) in other.app {
            let c = self.app.entry(k).or_default();
            c.0 += flows;
            c.1 += txs;
        }
    }
}

/// What workers hand on: alerts, and the records of the flows that ended, of the
/// packets dropped and of the transactions and files logged.
#[derive(Default)]
pub(super) struct Out {
    alerts: Vec<Alert>,
    records: Vec<Record>,
    /// A worker thread's counters, when asked for them ([`Work::Report`]).
    report: Option<Box<WorkerReport>>,
}

impl Out {
    fn extend(&mut self, other: Out) {
        self.alerts.extend(other.alerts);
        self.records.extend(other.records);
    }

    /// Hands everything on and empties it: alerts in the order given, unless `sort`
    /// (several workers' answers) or there are records, which go in packet order (a
    /// flow's record after the alerts of its end, before those of the packet that ended
    /// it; a packet's records after its alerts).
    fn deliver(&mut self, sort: bool, out: &mut Emitter) -> Result<(), String> {
        if sort || !self.records.is_empty() {
            // A packet's alerts come from one worker, in evaluation order: a stable
            // sort by packet number (flow ends first, by flow) restores the
            // single-threaded order.
            self.alerts.sort_by_key(Alert::order);
            self.records.sort_by_key(Record::order);
        }
        let mut records = self.records.drain(..).peekable();
        for al in self.alerts.drain(..) {
            let at = al.order();
            while let Some(r) = records.next_if(|r| r.order() < at) {
                out.record(r)?;
            }
            out.emit(&al)?;
        }
        records.try_for_each(|r| out.record(r))
    }
}

impl Worker {
    /// A worker holding `1 / share` of the flow and stream-memory budget.
    fn new(set: &Arc<RuleSet>, flow: &FlowConfig, share: usize, det: DetectOptions) -> Worker {
        let mut cfg = flow.clone();
        cfg.max_flows = (cfg.max_flows / share).max(1);
        cfg.max_tcp_sessions = (cfg.max_tcp_sessions / share).max(1);
        cfg.stream_memcap = (cfg.stream_memcap / share).max(1 << 20);
        Worker {
            flows: FlowTable::new(cfg),
            det: Detector::new(Arc::clone(set), det),
            flow_time: Duration::ZERO,
            records: Records {
                flow: false,
                flow_exception: false,
                drop: false,
                decode: false,
                tagged: false,
            },
            ended: Ended::default(),
        }
    }

    /// Tracks and inspects one packet; true when it is dropped (IPS).
    fn process(&mut self, pkt: &Packet, track_stream: bool, o: &mut Out) -> bool {
        let out = &mut o.alerts;
        let n = out.len();
        let t = self.det.profile().is_some().then(Instant::now);
        let flow = self.flows.packet(pkt, track_stream);
        if let Some(t) = t {
            self.flow_time += t.elapsed();
        }
        let in_flow = flow.as_ref().map(|(f, obs)| (f.id(), obs.dir));
        match flow {
            // Inline, a segment that overlaps the stream with other bytes goes on as
            // the stream holds it (and is inspected so).
            Some((f, obs)) => match &obs.normalized {
                Some(bytes) => {
                    let mut q = pkt.clone();
                    q.rewrite_tcp_payload(bytes);
                    self.det.inspect(&q, Some((f, &obs)), out)
                }
                None => self.det.inspect(pkt, Some((f, &obs)), out),
            },
            None => self.det.inspect(pkt, None, out),
        }
        let dropped = self.det.packet_dropped();
        if self.records.drop
            && let Some(why) = self.det.drop_reason()
        {
            o.records
                .extend(DropRecord::of(pkt, in_flow, why).map(Record::Drop));
        }
        let flow_id = in_flow.map(|f| f.0);
        if self.records.decode {
            o.records
                .extend(DecodeRecord::of(pkt, flow_id).map(Record::Decode));
        }
        if self.records.tagged && self.det.packet_tagged() {
            o.records
                .push(Record::Tagged(TaggedRecord::of(pkt, flow_id)));
        }
        // Flows this packet ended (expired, or evicted for room) come before it.
        let retired = self.flows.take_retired();
        if !retired.is_empty() {
            let mut ended = Out::default();
            self.finish_flows(retired, pkt.num, &mut ended);
            o.alerts.splice(n..n, ended.alerts);
            o.records.extend(ended.records);
        }
        o.records
            .extend(self.det.take_logs().into_iter().map(Record::Tx));
        dropped
    }

    /// Does one item of work sent to a worker thread.
    fn work(&mut self, work: &Work, out: &mut Out) {
        match work {
            Work::Packet(p, track) => {
                self.process(p, *track, out);
            }
            Work::Sweep(now, at) => self.sweep(*now, *at, out),
            Work::End(at) => self.end(*at, out),
            Work::Reload(set) => self.reload(Arc::clone(set)),
            Work::Report => out.report = Some(Box::new(self.report())),
        }
    }

    /// Sweeps idle flows before packet `at`, finishing them.
    fn sweep(&mut self, now: Duration, at: u64, out: &mut Out) {
        self.flows.sweep(now);
        let retired = self.flows.take_retired();
        self.finish_flows(retired, at, out);
    }

    /// Ends every flow (end of input; `at` is past the last packet).
    fn end(&mut self, at: u64, out: &mut Out) {
        let flows = self.flows.drain();
        self.finish_flows(flows, at, out);
    }

    #[expect(
        clippy::vec_box,
        reason = "the flow table hands flows over boxed: a flow is over a kilobyte"
    )]
    fn finish_flows(&mut self, flows: Vec<Box<Flow<FlowData>>>, at: u64, out: &mut Out) {
        for mut f in flows {
            self.det.flow_end(&mut f, at, &mut out.alerts);
            self.ended.flow(&f);
            out.records
                .extend(self.det.take_logs().into_iter().map(Record::Tx));
            if self.records.flow {
                let rec = FlowRecord::of(&f, at, self.records.flow_exception);
                out.records.push(Record::Flow(rec));
            }
        }
    }

    /// Inspects with `set` from the next packet on; every flow carries over.
    fn reload(&mut self, set: Arc<RuleSet>) {
        self.det.reload(set, &mut self.flows);
    }

    fn report(&self) -> WorkerReport {
        WorkerReport {
            flows: self.flows.stats().clone(),
            counts: self.det.counts(),
            ended: self.ended.clone(),
        }
    }
}

/// What a worker did, for the summary.
struct WorkerReport {
    flows: FlowStats,
    counts: Counts,
    ended: Ended,
}

/// What the pool did, summed over its workers.
pub(super) struct PoolReport {
    pub flows: FlowStats,
    /// What detection did.
    pub counts: Counts,
    /// What the flows that ended add up to.
    pub ended: Ended,
    /// With `--profile`: the detector's stage times and the time in the flow table.
    pub profile: Option<(Profile, Duration)>,
}

impl PoolReport {
    /// The workers' reports summed.
    fn sum(reports: impl IntoIterator<Item = WorkerReport>) -> PoolReport {
        let mut total = PoolReport {
            flows: FlowStats::default(),
            counts: Counts::default(),
            ended: Ended::default(),
            profile: None,
        };
        for r in reports {
            total.flows.add(&r.flows);
            total.counts += r.counts;
            total.ended.add(r.ended);
        }
        total
    }
}

/// Packets per chunk: the unit in which packets go out to worker threads and alerts
/// come back to be merged.
const CHUNK: usize = 1024;

/// What a worker thread is sent, in packet order.
// A packet is moved to its worker by value; boxing it would add an allocation per packet.
#[allow(clippy::large_enum_variant)]
enum Work {
    /// A packet and whether its TCP payload may enter the stream.
    Packet(Packet, bool),
    /// Sweep idle flows (at the same place in the packet stream for every worker),
    /// before the packet with this number.
    Sweep(Duration, u64),
    /// The input ended after the packet before this number: end every flow.
    End(u64),
    /// Inspect with this rule set from here on.
    Reload(Arc<RuleSet>),
    /// Send the counters so far back with this chunk's output.
    Report,
}

/// The records workers make besides alerts.
#[derive(Clone, Copy)]
pub(super) struct Records {
    /// One per flow when it ends (written as `flow` or `netflow` records, or both).
    pub flow: bool,
    /// Flow records name the exception policy their flow triggered.
    pub flow_exception: bool,
    /// One per packet dropped (IPS mode).
    pub drop: bool,
    /// One per decoder event a packet raised (`anomaly` records).
    pub decode: bool,
    /// One per packet a `tag` holds (`packet` records).
    pub tagged: bool,
}

/// The detection workers.
pub(super) struct Pool {
    lanes: Lanes,
}

enum Lanes {
    /// One worker, on the reading thread, and its output for the packet in hand.
    Here(Box<Worker>, Out),
    Threads(Threads),
}

impl Pool {
    /// `n` workers sharing the flow and stream-memory budget, making the records
    /// `records` asks for; with `profile`, one worker that times its stages.
    pub fn new(
        n: usize,
        set: &Arc<RuleSet>,
        flow: &FlowConfig,
        det: DetectOptions,
        records: Records,
        profile: bool,
    ) -> Pool {
        // Bits kept on hosts (`xbits`) and announced flows are one table each,
        // whatever the thread.
        let shared = netsieve_detect::engine::Shared::default();
        let worker = |share| {
            let mut w = Worker::new(set, flow, share, det);
            w.records = records;
            w.det.share(shared.clone());
            w
        };
        let lanes = if n <= 1 || profile {
            let mut w = worker(1);
            if profile {
                w.det.start_profiling();
            }
            Lanes::Here(Box::new(w), Out::default())
        } else {
            let workers = (0..n).map(|_| worker(n)).collect();
            Lanes::Threads(Threads::start(workers, flow.vlan_tracking))
        };
        Pool { lanes }
    }

    /// Detection threads.
    pub fn threads(&self) -> usize {
        match &self.lanes {
            Lanes::Here(..) => 1,
            Lanes::Threads(t) => t.lanes(),
        }
    }

    /// A packet (taken: the pool may send it to another thread) and whether its TCP
    /// payload may enter the stream. True when the packet is dropped (IPS), which only a
    /// pool of one knows at once (inline mode runs one).
    pub fn packet(
        &mut self,
        pkt: &mut Packet,
        track: bool,
        out: &mut Emitter,
    ) -> Result<bool, String> {
        match &mut self.lanes {
            Lanes::Here(w, o) => {
                let dropped = w.process(pkt, track, o);
                o.deliver(false, out)?;
                Ok(dropped)
            }
            Lanes::Threads(t) => t.push(pkt, track, out).map(|()| false),
        }
    }

    /// Sweeps idle flows before packet `at`.
    pub fn sweep(&mut self, now: Duration, at: u64, out: &mut Emitter) -> Result<(), String> {
        match &mut self.lanes {
            Lanes::Here(w, o) => {
                w.sweep(now, at, o);
                o.deliver(false, out)
            }
            Lanes::Threads(t) => {
                t.queue(|| Work::Sweep(now, at));
                Ok(())
            }
        }
    }

    /// Delivers the alerts of every packet handed over so far (a live source, when
    /// traffic pauses: worker threads otherwise wait for a whole chunk).
    pub fn flush(&mut self, out: &mut Emitter) -> Result<(), String> {
        match &mut self.lanes {
            Lanes::Here(..) => Ok(()),
            Lanes::Threads(t) => t.flush(out),
        }
    }

    /// The counters so far, summed over the workers, once every packet handed over is
    /// inspected and its alerts delivered.
    pub fn report(&mut self, out: &mut Emitter) -> Result<PoolReport, String> {
        match &mut self.lanes {
            Lanes::Here(w, _) => Ok(PoolReport::sum([w.report()])),
            Lanes::Threads(t) => t.report(out),
        }
    }

    /// Switches every worker to `set` between two packets: the alerts of the packets
    /// before are delivered first (the emitter names their rules from the old set), then
    /// the emitter switches, and each worker switches before its next packet.
    pub fn reload(
        &mut self,
        set: &Arc<RuleSet>,
        thresholds: Option<&ThresholdConfig>,
        out: &mut Emitter,
    ) -> Result<(), String> {
        self.flush(out)?;
        out.reload(Arc::clone(set), thresholds);
        match &mut self.lanes {
            Lanes::Here(w, _) => w.reload(Arc::clone(set)),
            Lanes::Threads(t) => t.queue(|| Work::Reload(Arc::clone(set))),
        }
        Ok(())
    }

    /// The input ended before packet `at`: every flow ends, every alert is delivered.
    pub fn finish(self, at: u64, out: &mut Emitter) -> Result<PoolReport, String> {
        match self.lanes {
            Lanes::Here(mut w, mut o) => {
                w.end(at, &mut o);
                o.deliver(false, out)?;
                Ok(PoolReport {
                    profile: w.det.profile().map(|p| (*p, w.flow_time)),
                    ..PoolReport::sum([w.report()])
                })
            }
            Lanes::Threads(t) => t.finish(at, out),
        }
    }
}

/// Worker threads, and one more worker on the reading thread. The reader splits each
/// chunk of packets by the hash of their flow's hosts, so every flow between two hosts
/// lands on the same worker (lane). When a chunk is full, the reader sends the threads
/// their batches, then inspects its own; each worker returns its alerts for the chunk
/// in packet order, and the chunks are merged and delivered in order.
///
/// With one worker here, the reader needs no core of its own: two threads keep two
/// cores busy. State that flows of different host pairs share (`xbits` on one host,
/// host tags) sees their packets in order only when they lie more than 2N + 1 chunks
/// apart, the most that may be in flight.
struct Threads {
    /// The worker on the reading thread: lane 0.
    here: Box<Worker>,
    /// Lanes 1 and up.
    txs: Vec<mpsc::SyncSender<(u64, Vec<Work>)>>,
    rx: mpsc::Receiver<(u64, Out)>,
    handles: Vec<std::thread::JoinHandle<WorkerReport>>,
    /// The chunk in hand, by lane.
    batches: Vec<Vec<Work>>,
    /// Frame buffers of packets the worker here is done with, for the packets read
    /// next: the reading thread then allocates only for the threads' packets.
    buffers: Vec<Vec<u8>>,
    in_chunk: usize,
    next_chunk: u64,
    next_emit: u64,
    /// Per chunk: replies received and the alerts so far.
    pending: HashMap<u64, (usize, Out)>,
    /// The workers' counters, as they come back for [`Work::Report`].
    reports: Vec<WorkerReport>,
    /// Flows are keyed by VLAN ids too (as the workers' tables key them).
    vlan_tracking: bool,
}

impl Threads {
    /// Runs the first worker here and the others on threads of their own.
    fn start(mut workers: Vec<Worker>, vlan_tracking: bool) -> Threads {
        let here = Box::new(workers.remove(0));
        let (res_tx, rx) = mpsc::channel();
        let mut txs = Vec::new();
        let mut handles = Vec::new();
        for (lane, mut w) in (1..).zip(workers) {
            let (tx, wrx) = mpsc::sync_channel::<(u64, Vec<Work>)>(4);
            let res_tx = res_tx.clone();
            // Named by lane (lane 0 runs on the reading thread), so that `top -H`,
            // `perf` and debuggers tell the threads apart.
            let thread = std::thread::Builder::new().name(format!("worker-{lane}"));
            handles.push(
                thread
                    .spawn(move || {
                        for (chunk, pkts) in wrx {
                            let mut out = Out::default();
                            for work in &pkts {
                                w.work(work, &mut out);
                            }
                            if res_tx.send((chunk, out)).is_err() {
                                break;
                            }
                        }
                        w.report()
                    })
                    .expect("the system could not start a thread"),
            );
            txs.push(tx);
        }
        Threads {
            here,
            batches: (0..=txs.len()).map(|_| Vec::new()).collect(),
            buffers: Vec::new(),
            txs,
            rx,
            handles,
            in_chunk: 0,
            next_chunk: 0,
            next_emit: 0,
            pending: HashMap::new(),
            reports: Vec::new(),
            vlan_tracking,
        }
    }

    /// Workers, the one here included.
    fn lanes(&self) -> usize {
        self.txs.len() + 1
    }

    /// Takes the packet into its lane's batch, leaving a spare buffer in its place.
    fn push(&mut self, pkt: &mut Packet, track: bool, out: &mut Emitter) -> Result<(), String> {
        let next = Packet {
            data: self
                .buffers
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(FRAME_ROOM)),
            ..Packet::default()
        };
        let p = std::mem::replace(pkt, next);
        let n = self.lanes();
        let hash = netsieve_packet::flow::flow_hash(&p, self.vlan_tracking);
        self.batches[lane(hash.unwrap_or(0), n)].push(Work::Packet(p, track));
        self.in_chunk += 1;
        if self.in_chunk == CHUNK {
            self.send()?;
            // Keep a bounded number of chunks in flight.
            while self.next_chunk - self.next_emit > 2 * n as u64 {
                self.receive(out)?;
            }
        }
        Ok(())
    }

    /// Adds the same work to every lane's batch.
    fn queue(&mut self, work: impl Fn() -> Work) {
        for b in &mut self.batches {
            b.push(work());
        }
    }

    /// Sends the current chunk: one batch (maybe empty) to every thread, then the
    /// worker here does its own, and what it made of it is its reply.
    fn send(&mut self) -> Result<(), String> {
        for (tx, b) in self.txs.iter().zip(&mut self.batches[1..]) {
            // The next batch is likely as long: room for it spares growing it.
            let room = b.len() + b.len() / 8;
            tx.send((
                self.next_chunk,
                std::mem::replace(b, Vec::with_capacity(room)),
            ))
            .map_err(|_| "a detection thread stopped".to_string())?;
        }
        let mut here = Out::default();
        for work in self.batches[0].drain(..) {
            self.here.work(&work, &mut here);
            if let Work::Packet(p, _) = work
                && p.data.capacity() <= MAX_SPARE
            {
                self.buffers.push(p.data);
            }
        }
        self.reply(self.next_chunk, here);
        self.next_chunk += 1;
        self.in_chunk = 0;
        Ok(())
    }

    /// One worker's output for a chunk.
    fn reply(&mut self, chunk: u64, mut got: Out) {
        self.reports.extend(got.report.take().map(|r| *r));
        let e = self.pending.entry(chunk).or_default();
        e.0 += 1;
        e.1.extend(got);
    }

    /// Waits for one reply, then delivers every chunk that is complete, in order.
    fn receive(&mut self, out: &mut Emitter) -> Result<(), String> {
        let (chunk, got) = loop {
            match self.rx.recv_timeout(Duration::from_secs(1)) {
                Ok(r) => break r,
                // A worker that died would leave the others waiting for work and this
                // thread waiting for its reply.
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.handles.iter().any(|h| h.is_finished()) {
                        return Err("a detection thread stopped".into());
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err("the detection threads stopped".into());
                }
            }
        };
        self.reply(chunk, got);
        while let Some((got, _)) = self.pending.get(&self.next_emit) {
            if *got < self.lanes() {
                break;
            }
            let (_, mut o) = self.pending.remove(&self.next_emit).expect("present");
            o.deliver(true, out)?;
            self.next_emit += 1;
        }
        Ok(())
    }

    /// Sends the chunk in hand, however short, and delivers every chunk sent.
    fn flush(&mut self, out: &mut Emitter) -> Result<(), String> {
        if self.in_chunk > 0 {
            self.send()?;
        }
        while self.next_emit < self.next_chunk {
            self.receive(out)?;
        }
        Ok(())
    }

    /// Sends the chunk in hand with a request for counters, and sums the answers once
    /// every chunk sent is delivered.
    fn report(&mut self, out: &mut Emitter) -> Result<PoolReport, String> {
        self.queue(|| Work::Report);
        self.send()?;
        while self.next_emit < self.next_chunk {
            self.receive(out)?;
        }
        Ok(PoolReport::sum(self.reports.drain(..)))
    }

    /// Flushes the last chunk, ends every flow (`at` is past the last packet), drains
    /// the threads and sums every worker's report.
    fn finish(mut self, at: u64, out: &mut Emitter) -> Result<PoolReport, String> {
        self.queue(|| Work::End(at));
        self.send()?;
        while self.next_emit < self.next_chunk {
            self.receive(out)?;
        }
        self.txs.clear();
        let mut reports = self
            .handles
            .into_iter()
            .map(|h| h.join())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| "a detection thread panicked".to_string())?;
        reports.push(self.here.report());
        Ok(PoolReport::sum(reports))
    }
}

/// The room a new frame buffer starts with: an Ethernet frame's, so that a buffer
/// reused for a larger frame than its first rarely grows.
const FRAME_ROOM: usize = 2048;

/// The largest frame buffer kept for reuse: one jumbo frame must not leave many large
/// buffers behind.
const MAX_SPARE: usize = 16 << 10;

/// The lane (0 for the reading thread) of a flow with this hash, of `n >= 2`.
///
/// The reading thread also reads, decodes and hands over every packet, so it inspects
/// fewer flows: of every 16 shares of flows a lane would get in an even split, it gets
/// 12. Measured with ET Open over the nDPI captures (callgrind, two threads), the reading
/// thread's own work per packet was about a quarter of a worker's, which puts the even
/// point near 12 (docs/BENCHMARKS.md, twenty-fifth session).
fn lane(hash: u64, n: usize) -> usize {
    let n = n as u64;
    let share = hash % (16 * n);
    let here = 12;
    if share < here {
        0
    } else {
        (1 + (share - here) % (n - 1)) as usize
    }
}

/// Checksum validation (`-k`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Checksums {
    All,
    None,
    Auto,
}

impl Checksums {
    pub fn parse(v: Option<&str>) -> Result<Checksums, String> {
        match v {
            None | Some("auto") => Ok(Checksums::Auto),
            Some("all") => Ok(Checksums::All),
            Some("none") => Ok(Checksums::None),
            Some(x) => Err(format!("-k {x}: expected all, none or auto")),
        }
    }
}

/// Suricata's `checksum-checks: auto` for capture files: validation stays on unless
/// more than 10% of the first 1,000 checked packets are wrong (a capture taken with
/// checksum offloading), then it is switched off.
#[derive(Default)]
struct AutoChecksum {
    seen: u64,
    bad: u64,
    decided: bool,
}

impl AutoChecksum {
    fn observe(&mut self, p: &Packet, d: &mut Decoder) {
        if self.decided || p.ip.is_none() {
            return;
        }
        self.seen += 1;
        self.bad += p.bad_checksum as u64;
        if self.bad * 10 > self.seen.max(10) {
            d.checksums = false;
            self.decided = true;
        } else if self.seen >= 1000 {
            self.decided = true;
        }
    }
}

/// What the reader saw.
#[derive(Default)]
pub(super) struct ReadStats {
    pub packets: u64,
    pub bytes: u64,
    pub bad_checksum: u64,
    /// Packets of link types the decoder does not read.
    pub undecoded: u64,
    /// Capture files that were damaged or unreadable.
    pub capture_errors: usize,
    /// Frames dropped by a verdict (inline and NFQUEUE; counted in IPS simulation too).
    pub dropped: u64,
    /// Time decoding, when profiling.
    pub decode_time: Duration,
    /// What the decoder found, by layer (Suricata's `stats.decoder`).
    pub decoded: Decoded,
}

/// Packets by the layers the decoder found in them (a tunnelled packet counts its inner
/// layers too), those it could not decode, and the events it raised.
#[derive(Clone, Debug, Default)]
pub(super) struct Decoded {
    pub invalid: u64,
    pub ethernet: u64,
    pub ipv4: u64,
    pub ipv6: u64,
    pub tcp: u64,
    pub udp: u64,
    pub icmpv4: u64,
    pub icmpv6: u64,
    /// IP in IP: by the inner version, then the outer's (`ipv6_in_ipv4`).
    pub ipv4_in_ipv4: u64,
    pub ipv6_in_ipv4: u64,
    pub ipv4_in_ipv6: u64,
    pub ipv6_in_ipv6: u64,
    /// Decoder events raised, by [`DecodeEvent`] (as an index; empty until one is).
    pub events: Vec<u64>,
}

impl Decoded {
    fn count(&mut self, p: &Packet) {
        use netsieve_packet::decode::L4;
        self.invalid += u64::from(p.error.is_some() || p.invalid);
        for &e in &p.events {
            if self.events.is_empty() {
                self.events = vec![0; DecodeEvent::ALL.len()];
            }
            self.events[e as usize] += 1;
        }
        if let Some(t) = &p.tunnel {
            match (t.proto, t.src.is_ipv4()) {
                (4, true) => self.ipv4_in_ipv4 += 1,
                (41, true) => self.ipv6_in_ipv4 += 1,
                (4, false) => self.ipv4_in_ipv6 += 1,
                (41, false) => self.ipv6_in_ipv6 += 1,
                _ => {}
            }
        }
        self.ethernet += u64::from(p.linktype == 1 && p.tunnel.is_none());
        match p.ip {
            Some(ip) if ip.src.is_ipv4() => self.ipv4 += 1,
            Some(_) => self.ipv6 += 1,
            None => {}
        }
        match p.l4 {
            L4::Tcp(_) => self.tcp += 1,
            L4::Udp { .. } => self.udp += 1,
            L4::Icmp { v6: false, .. } => self.icmpv4 += 1,
            L4::Icmp { v6: true, .. } => self.icmpv6 += 1,
            _ => {}
        }
    }
}

/// The reading stage: frames from the source, through the capture filter and the
/// decoder, into the pool; the sweep clock and tunnels are decided here, where every
/// packet passes.
pub(super) struct Reader {
    decoder: Decoder,
    checksums: Checksums,
    auto: AutoChecksum,
    filter: Option<CaptureFilter>,
    clock: SweepClock,
    profile: bool,
    /// (file, link type) pairs already reported as not decoded.
    undecoded_links: Vec<(String, u32)>,
    /// Progress on standard error, when it is a terminal.
    progress: Option<Progress>,
    /// The capture file of the last frame read (announced to the outputs as it changes).
    file: String,
    pub stats: ReadStats,
}

/// A line on a terminal that says how far a run is, rewritten four times a second once
/// the run has lasted half a second (short runs print nothing).
struct Progress {
    /// The inputs' size in bytes.
    total: u64,
    start: Instant,
    last: Instant,
    shown: bool,
}

impl Progress {
    const FIRST: Duration = Duration::from_millis(500);
    const EVERY: Duration = Duration::from_millis(250);

    fn new(total: u64) -> Progress {
        let now = Instant::now();
        Progress {
            total,
            start: now,
            last: now,
            shown: false,
        }
    }

    /// After each packet: rewrites the line when it is time (the clock is read every
    /// 1,024 packets).
    fn tick(&mut self, read: &ReadStats, alerts: u64) {
        if !read.packets.is_multiple_of(1024) {
            return;
        }
        let now = Instant::now();
        let due = if self.shown { Self::EVERY } else { Self::FIRST };
        if now.duration_since(if self.shown { self.last } else { self.start }) < due {
            return;
        }
        self.last = now;
        self.shown = true;
        eprint!(
            "\r{} packets, {:.0} MB of {:.0} MB, {alerts} alerts, {:.1} s",
            read.packets,
            read.bytes as f64 / 1e6,
            self.total as f64 / 1e6,
            now.duration_since(self.start).as_secs_f64()
        );
    }
}

impl Reader {
    pub fn new(
        decoder: Decoder,
        checksums: Checksums,
        filter: Option<CaptureFilter>,
        profile: bool,
    ) -> Reader {
        Reader {
            decoder,
            checksums,
            auto: AutoChecksum::default(),
            filter,
            clock: SweepClock::default(),
            profile,
            undecoded_links: Vec::new(),
            progress: None,
            file: String::new(),
            stats: ReadStats::default(),
        }
    }

    /// Shows progress while reading inputs of `total` bytes, when standard error is a
    /// terminal.
    pub fn show_progress(&mut self, total: u64) {
        if std::io::stderr().is_terminal() {
            self.progress = Some(Progress::new(total));
        }
    }

    /// Does what the control socket ordered, if anything: true to stop.
    fn obey(control: &Control, pool: &mut Pool, out: &mut Emitter) -> Result<bool, String> {
        match control.order() {
            None => Ok(false),
            Some(Order::Stop) => Ok(true),
            Some(Order::Switch(rules)) => {
                pool.reload(&rules.set, rules.thresholds.as_ref(), out)?;
                control.switched();
                eprintln!(
                    "netsieve scan: rules reloaded: {} inspected, {} skipped",
                    rules.set.stats().inspected,
                    rules.errors.len()
                );
                Ok(false)
            }
        }
    }

    /// Reads the source to its end (or until `interrupt`), running every packet
    /// through the pool. While a live source is quiet, idle flows are swept by the wall
    /// clock and every alert so far is written out.
    pub fn run(
        &mut self,
        src: &mut FrameSource,
        pool: &mut Pool,
        out: &mut Emitter,
        interrupt: &Interrupt,
        control: &Control,
        mut stats: Option<&mut Periodic>,
    ) -> Result<(), String> {
        let mut frame = Frame::default();
        let mut pkt = Packet::default();
        let mut inner = Packet::default();
        // A stop ordered while a frame was being read ends the run after that frame.
        let mut stopping = false;
        loop {
            if stopping || Reader::obey(control, pool, out)? {
                break;
            }
            if interrupt.requested() {
                // Stop between packets; the run then ends as at the end of its input.
                if !src.is_live() {
                    eprintln!("netsieve scan: interrupted; finishing what was read");
                }
                break;
            }
            let next = src.next(&mut frame);
            // A live source may have waited for its next block: rules changed meanwhile
            // apply to the frame it brought.
            stopping = Reader::obey(control, pool, out)?;
            match next {
                Ok(Next::Frame) => {}
                Ok(Next::End) => break,
                Ok(Next::Idle) => {
                    self.idle(pool, out)?;
                    control.publish(self.counters(src, out));
                    if let Some(p) = stats.as_deref_mut() {
                        p.tick(&self.stats, pool, out)?;
                    }
                    continue;
                }
                Err(e) if src.is_live() => return Err(e.to_string()),
                Err(e) => {
                    // The damaged file ends here; the others are still read.
                    eprintln!("netsieve scan: {e}");
                    self.stats.capture_errors += 1;
                    continue;
                }
            }
            if let Some(f) = self.filter.as_mut()
                && !f.accepts(&frame)?
            {
                continue;
            }
            if src.name() != self.file {
                self.file = src.name().to_string();
                out.file(self.stats.packets + 1, &self.file)?;
            }
            let dropped = self.frame(src.name(), &frame, &mut pkt, &mut inner, pool, out)?;
            // Inline and from a queue, the packet goes on unless it was dropped.
            self.stats.dropped += u64::from(dropped);
            src.verdict(&frame, !dropped).map_err(|e| e.to_string())?;
            if self.stats.packets.is_multiple_of(4096) {
                control.publish(self.counters(src, out));
            }
            // The clock is read for every live packet, every 1,024th from a file.
            if let Some(p) = stats.as_deref_mut()
                && (src.is_live() || self.stats.packets.is_multiple_of(1024))
            {
                p.tick(&self.stats, pool, out)?;
            }
            if let Some(p) = self.progress.as_mut() {
                p.tick(&self.stats, out.alerts());
            }
        }
        if self.progress.as_ref().is_some_and(|p| p.shown) {
            eprintln!();
        }
        Ok(())
    }

    /// What the control socket shows of this run.
    fn counters(&self, src: &FrameSource, out: &Emitter) -> Counters {
        Counters {
            packets: self.stats.packets,
            bytes: self.stats.bytes,
            bad_checksum: self.stats.bad_checksum,
            alerts: out.alerts(),
            kernel: src.kernel_stats(),
        }
    }

    /// A pause in live traffic: flows idle by the wall clock are swept, and the alerts of
    /// every packet so far are delivered and written.
    fn idle(&mut self, pool: &mut Pool, out: &mut Emitter) -> Result<(), String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        if self.clock.due(now) {
            pool.sweep(now, self.stats.packets + 1, out)?;
        }
        pool.flush(out)?;
        out.flush()
    }

    /// One frame: counted, decoded, then the packet and the packets of the tunnels it
    /// carries, innermost last, go to the pool. True when the frame is dropped (IPS: a
    /// drop rule matched one of its packets).
    fn frame(
        &mut self,
        file: &str,
        frame: &Frame,
        pkt: &mut Packet,
        inner: &mut Packet,
        pool: &mut Pool,
        out: &mut Emitter,
    ) -> Result<bool, String> {
        self.stats.packets += 1;
        self.stats.bytes += frame.data.len() as u64;
        if !decodes_link(frame.linktype) {
            self.undecoded(file, frame.linktype);
        }
        let t_dec = self.profile.then(Instant::now);
        self.decoder.decode(frame, self.stats.packets, pkt);
        if let Some(t) = t_dec {
            self.stats.decode_time += t.elapsed();
        }
        if self.checksums == Checksums::Auto {
            self.auto.observe(pkt, &mut self.decoder);
        }
        let bad = pkt.bad_checksum && self.decoder.checksums;
        if bad {
            self.stats.bad_checksum += 1;
        }
        if self.clock.due(pkt.ts) {
            pool.sweep(pkt.ts, self.stats.packets, out)?;
        }
        // A segment with a wrong checksum would not reach the receiver: its payload
        // stays out of the reassembled stream, but the packet itself is inspected (as
        // Suricata does; captures taken on the sending host often have such packets).
        let mut track = !bad;
        let mut dropped = false;
        loop {
            let t_dec = self.profile.then(Instant::now);
            let more = self.decoder.decode_inner(pkt, inner);
            if let Some(t) = t_dec {
                self.stats.decode_time += t.elapsed();
            }
            self.stats.decoded.count(pkt);
            dropped |= pool.packet(pkt, track, out)?;
            if !more {
                return Ok(dropped);
            }
            std::mem::swap(pkt, inner);
            track = !(pkt.bad_checksum && self.decoder.checksums);
        }
    }

    /// A frame of a link type the decoder does not read: counted, and reported once per
    /// file and link type (nothing in it can be inspected).
    fn undecoded(&mut self, file: &str, linktype: u32) {
        self.stats.undecoded += 1;
        if !self
            .undecoded_links
            .iter()
            .any(|(f, l)| f == file && *l == linktype)
        {
            eprintln!(
                "netsieve scan: {file}: link type {linktype} is not one netsieve decodes; its packets are not inspected"
            );
            self.undecoded_links.push((file.to_string(), linktype));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::lane;

    /// Every lane gets flows; the reading thread's lane gets 12 of every 16 × n
    /// hashes, and the threads share the rest within one hash of each other per 16 × n.
    #[test]
    fn lanes_split_flows_as_documented() {
        for n in 2..=8usize {
            let mut got = vec![0u64; n];
            for h in 0..16 * n as u64 * 3 {
                let l = lane(h, n);
                assert!(l < n, "{h} -> {l} of {n}");
                got[l] += 1;
            }
            assert_eq!(got[0], 12 * 3, "n = {n}: {got:?}");
            let threads = &got[1..];
            let (lo, hi) = (threads.iter().min(), threads.iter().max());
            assert!(hi.unwrap() - lo.unwrap() <= 3, "n = {n}: {got:?}");
            // A hash far from the small ones lands as its remainder does.
            assert_eq!(lane(u64::MAX, n), lane(u64::MAX % (16 * n as u64), n));
        }
    }
}

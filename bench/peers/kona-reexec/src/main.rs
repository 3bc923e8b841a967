//! Bench peer: re-executes op-blocks fixtures (see the fixtures' SOURCE.md for the format) with
//! kona's stateless OP Stack block builder (`kona-executor` from crates.io) and prints, as one
//! JSON line, the gas, the time spent in `build_block` and the Mgas/s.
//!
//! Usage: kona-reexec [--rounds N] <fixture.json>...
//! Round 1 is the cold run (first execution in the process); the warm figure is over the later
//! rounds. Reading and parsing the JSON and building the preimage map are not timed, as in
//! flashlog's bench. Exits non-zero when a produced block hash differs from the fixture's.

use alloy_consensus::{Header, Sealable};
use alloy_op_evm::OpEvmFactory;
use alloy_primitives::{Address, B64, B256, Bytes, keccak256};
use alloy_rlp::Decodable;
use alloy_rpc_types_engine::PayloadAttributes;
use kona_executor::{StatelessL2Builder, TrieDBProvider};
use kona_genesis::RollupConfig;
use kona_mpt::{NoopTrieHinter, TrieNode, TrieProvider};
use op_alloy_rpc_types_engine::OpPayloadAttributes;
use serde::Deserialize;
use std::{collections::HashMap, rc::Rc, time::Instant};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload {
    timestamp: alloy_primitives::U64,
    prev_randao: B256,
    fee_recipient: Address,
    parent_beacon_block_root: Option<B256>,
    gas_limit: alloy_primitives::U64,
    eip1559_params: Option<B64>,
    transactions: Vec<Bytes>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Expected {
    block_hash: B256,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fixture {
    rollup_config: RollupConfig,
    parent_header: Header,
    payload: Payload,
    expected: Expected,
    preimages: HashMap<B256, Bytes>,
}

/// Preimages by their keccak256 hash, shared by the builders of every round.
#[derive(Debug, Clone)]
struct Preimages(Rc<HashMap<B256, Bytes>>);

impl Preimages {
    fn get(&self, key: B256) -> Result<&Bytes, String> {
        self.0.get(&key).ok_or_else(|| format!("preimage {key} missing"))
    }
}

impl TrieProvider for Preimages {
    type Error = String;
    fn trie_node_by_hash(&self, key: B256) -> Result<TrieNode, String> {
        TrieNode::decode(&mut self.get(key)?.as_ref()).map_err(|e| e.to_string())
    }
}

impl TrieDBProvider for Preimages {
    fn bytecode_by_hash(&self, hash: B256) -> Result<Bytes, String> {
        self.get(hash).cloned()
    }
    fn header_by_hash(&self, hash: B256) -> Result<Header, String> {
        Header::decode(&mut self.get(hash)?.as_ref()).map_err(|e| e.to_string())
    }
}

struct Loaded {
    name: String,
    config: RollupConfig,
    parent: Header,
    attrs: OpPayloadAttributes,
    expected: B256,
    preimages: Preimages,
}

fn load(path: &str) -> Loaded {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let f: Fixture = serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    for (key, value) in &f.preimages {
        assert_eq!(keccak256(value), *key, "{path}: preimage does not hash to its key");
    }
    let attrs = OpPayloadAttributes {
        payload_attributes: PayloadAttributes {
            timestamp: f.payload.timestamp.to(),
            prev_randao: f.payload.prev_randao,
            suggested_fee_recipient: f.payload.fee_recipient,
            withdrawals: Some(Vec::new()),
            parent_beacon_block_root: f.payload.parent_beacon_block_root,
        },
        transactions: Some(f.payload.transactions),
        no_tx_pool: None,
        gas_limit: Some(f.payload.gas_limit.to()),
        eip_1559_params: f.payload.eip1559_params,
    };
    Loaded {
        name: path.rsplit('/').next().unwrap_or(path).to_string(),
        config: f.rollup_config,
        parent: f.parent_header,
        attrs,
        expected: f.expected.block_hash,
        preimages: Preimages(Rc::new(f.preimages)),
    }
}

/// CPU time of this process, in seconds (the bench machine is shared: wall time includes waiting).
fn cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// Executes one fixture; returns (gas used, wall seconds, CPU seconds in build_block).
fn execute(fixture: &Loaded) -> (u64, f64, f64) {
    let mut builder = StatelessL2Builder::new(
        &fixture.config,
        OpEvmFactory::default(),
        fixture.preimages.clone(),
        NoopTrieHinter,
        fixture.parent.clone().seal_slow(),
    );
    let attrs = fixture.attrs.clone();
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let outcome = builder.build_block(attrs).unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
    let (seconds, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    if outcome.header.seal() != fixture.expected {
        eprintln!("{}: hash {} != expected {}", fixture.name, outcome.header.seal(), fixture.expected);
        std::process::exit(2);
    }
    (outcome.header.gas_used, seconds, cpu)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut rounds = 3usize;
    if args.first().map(String::as_str) == Some("--rounds") {
        rounds = args.get(1).and_then(|n| n.parse().ok()).expect("--rounds N");
        args.drain(..2);
    }
    assert!(rounds >= 2 && !args.is_empty(), "usage: kona-reexec [--rounds N>=2] <fixture.json>...");
    let fixtures: Vec<Loaded> = args.iter().map(|p| load(p)).collect();
    let (mut gas, mut cold_s, mut warm_s, mut cold_cpu, mut warm_cpu) = (0u64, 0f64, 0f64, 0f64, 0f64);
    let mut per_fixture = Vec::new();
    for round in 0..rounds {
        for fixture in &fixtures {
            let (used, seconds, cpu) = execute(fixture);
            if round == 0 {
                gas += used;
                cold_s += seconds;
                cold_cpu += cpu;
            } else {
                warm_s += seconds;
                warm_cpu += cpu;
                if round == rounds - 1 {
                    per_fixture.push(format!("\"{}\":{:.3}", fixture.name, seconds * 1e3));
                }
            }
        }
    }
    let mgas = gas as f64 / 1e6;
    let warm_per_round = warm_s / (rounds - 1) as f64;
    let warm_cpu_per_round = warm_cpu / (rounds - 1) as f64;
    println!(
        "{{\"blocks\":{},\"mgas\":{mgas},\"coldMs\":{:.3},\"warmMs\":{:.3},\"warmCpuMs\":{:.3},\"coldMgasPerS\":{:.2},\"warmMgasPerS\":{:.2},\"coldCpuMgasPerS\":{:.2},\"warmCpuMgasPerS\":{:.2},\"lastRoundMs\":{{{}}}}}",
        fixtures.len(),
        cold_s * 1e3,
        warm_per_round * 1e3,
        warm_cpu_per_round * 1e3,
        mgas / cold_s,
        mgas / warm_per_round,
        mgas / cold_cpu,
        mgas / warm_cpu_per_round,
        per_fixture.join(",")
    );
}

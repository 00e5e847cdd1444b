//! The JSON-RPC readers: A2A's `POST /a2a/jsonrpc` and MCP's `POST /mcp`, before any
//! method runs. Arbitrary bytes must never panic, and a refusal is one of JSON-RPC's
//! own codes for a message that cannot be read (parse error, invalid request, invalid
//! params), never an internal error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use muster_http::fuzzing;

/// JSON-RPC's parse error, invalid request and invalid params.
const UNREADABLE: [i64; 3] = [-32700, -32600, -32602];

fuzz_target!(|data: &[u8]| {
    if let Err(code) = fuzzing::a2a_jsonrpc_request(data) {
        assert!(UNREADABLE.contains(&code), "A2A refusal {code}");
    }
    if let Err(code) = fuzzing::mcp_message(data) {
        assert!(UNREADABLE.contains(&i64::from(code)), "MCP refusal {code}");
    }
});

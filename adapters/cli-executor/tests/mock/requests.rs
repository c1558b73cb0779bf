//! Reading the loopback mock model's request log (`mock_responses.py --requests`): which
//! attempts' prompts the newest request carried. Shared by the CLI executor's real-Codex
//! tests and the daemon's first-night test (`#[path]`), which drive the same mock.

use serde_json::Value;

/// The attempt numbers ("Attempt N ...") of the user messages in the newest request, with
/// how many times each appears: a continuation sent twice shows as a count of 2.
pub fn prompts_in_last_request(requests: &[Value]) -> Vec<(u32, usize)> {
    let last = requests.last().expect("the model was asked");
    let mut counts = std::collections::BTreeMap::new();
    for item in last["input"].as_array().expect("input") {
        if item["role"] != "user" {
            continue;
        }
        let text: String =
            item["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
        if let Some(n) = text.split("Attempt ").nth(1).and_then(|rest| rest.split(' ').next()?.parse().ok()) {
            *counts.entry(n).or_insert(0) += 1;
        }
    }
    counts.into_iter().collect()
}

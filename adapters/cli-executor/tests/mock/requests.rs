//! Reading the loopback mock model's request log (`mock_responses.py --requests`): which
//! attempts' prompts the newest request carried, and how many turns each attempt started.
//! Shared by the CLI executor's real-Codex tests and the daemon's first-night and failover
//! tests (`#[path]`), which drive the same mock.

use serde_json::Value;

/// The attempt numbers ("Attempt N ...") of the user messages in the newest request, with
/// how many times each appears: a continuation sent twice shows as a count of 2.
pub fn prompts_in_last_request(requests: &[Value]) -> Vec<(u32, usize)> {
    let last = requests.last().expect("the model was asked");
    let mut counts = std::collections::BTreeMap::new();
    for item in last["input"].as_array().expect("input") {
        if let Some(n) = attempt_of(item) {
            *counts.entry(n).or_insert(0) += 1;
        }
    }
    counts.into_iter().collect()
}

/// The attempt numbers of the requests that start a turn (nothing after their newest user
/// message: the model's first request for that prompt, in any conversation), with how many
/// such requests each has: a prompt delivered twice, even to two children, shows as 2.
pub fn turns_started(requests: &[Value]) -> Vec<(u32, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    for request in requests {
        let input = request["input"].as_array().map(Vec::as_slice).unwrap_or_default();
        let Some(last_user) = input.iter().rposition(|i| i["role"] == "user") else { continue };
        if last_user + 1 == input.len()
            && let Some(n) = attempt_of(&input[last_user])
        {
            *counts.entry(n).or_insert(0) += 1;
        }
    }
    counts.into_iter().collect()
}

/// The N of a user message's "Attempt N ...", if it is one.
fn attempt_of(item: &Value) -> Option<u32> {
    if item["role"] != "user" {
        return None;
    }
    let text: String = item["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
    text.split("Attempt ").nth(1).and_then(|rest| rest.split(' ').next()?.parse().ok())
}

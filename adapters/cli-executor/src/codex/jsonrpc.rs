//! JSON-RPC 2.0 over JSONL, as `codex app-server` speaks it on stdio: one message a line.
//!
//! The client numbers its requests; [`Pending`] remembers what each one was for and when
//! it is overdue, so a response is matched to its request and a lost answer is noticed.
//! The app-server omits `"jsonrpc"` on what it sends (seen in the 0.169.0 recordings), so
//! the decoder does not require it.

use crate::Error;
use crate::base::limits::{LINE_BYTES_MAX, REQUEST_TIMEOUT_MS, REQUESTS_IN_FLIGHT_MAX};
use engine::time::Timestamp;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// One message read from the app-server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to one of our requests: `result`, or `error`.
    Response {
        /// Our request id.
        id: u64,
        /// `Ok(result)` or `Err(error object)`.
        outcome: Result<Value, RpcError>,
    },
    /// A notification: no id, no answer expected.
    Notification {
        /// Its method, e.g. `turn/completed`.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A request from the server (an approval, a question): it waits for our answer.
    ServerRequest {
        /// The server's id, echoed in our answer (a number or a string).
        id: Value,
        /// Its method, e.g. `item/commandExecution/requestApproval`.
        method: String,
        /// Its params.
        params: Value,
    },
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// The numeric code (`-32600` invalid request, `-32001` overloaded, ...).
    pub code: i64,
    /// The server's message.
    pub message: String,
}

/// The JSON-RPC code for an invalid request: app-server 0.169.0 uses it for "no active
/// turn to steer" and for "authentication required".
pub const INVALID_REQUEST: i64 = -32600;

/// The JSON-RPC code for a method the receiver does not offer.
pub const METHOD_NOT_FOUND: i64 = -32601;

/// Decodes one line from the app-server.
pub fn decode(line: &str) -> Result<Incoming, Error> {
    if line.len() > LINE_BYTES_MAX {
        return Err(Error::LineTooLong { bytes: line.len() });
    }
    let value: Value = serde_json::from_str(line).map_err(|e| malformed(format!("not JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        return Err(malformed("not an object".to_string()));
    };
    let method = object.remove("method");
    let id = object.remove("id");
    let params = object.remove("params").unwrap_or(Value::Null);
    match (method, id) {
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::ServerRequest { id, method, params }),
        (Some(_), _) => Err(malformed("method is not a string".to_string())),
        (None, Some(id)) => {
            let id = id.as_u64().ok_or_else(|| Error::UnknownResponse { id: id.to_string() })?;
            let outcome = match (object.remove("result"), object.remove("error")) {
                (Some(result), None) => Ok(result),
                (None, Some(error)) => Err(rpc_error(&error)?),
                _ => return Err(malformed(format!("response {id} has not exactly one of result and error"))),
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, None) => Err(malformed("neither method nor id".to_string())),
    }
}

fn rpc_error(error: &Value) -> Result<RpcError, Error> {
    let code =
        error.get("code").and_then(Value::as_i64).ok_or_else(|| malformed("error without a code".to_string()))?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
    Ok(RpcError { code, message })
}

fn malformed(detail: String) -> Error {
    Error::Malformed { detail }
}

/// The line of a request (no trailing newline).
pub fn request_line(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The line of a notification; `params` is left out when `None`.
pub fn notification_line(method: &str, params: Option<Value>) -> String {
    let mut object = Map::new();
    object.insert("jsonrpc".to_string(), json!("2.0"));
    object.insert("method".to_string(), json!(method));
    if let Some(params) = params {
        object.insert("params".to_string(), params);
    }
    Value::Object(object).to_string()
}

/// The line answering a server request with a result.
pub fn result_line(id: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

/// The line answering a server request with an error.
pub fn error_line(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Requests in flight: the id of each, what it was for (`T`), and when it is overdue.
#[derive(Debug)]
pub struct Pending<T> {
    /// The next id to hand out; ids start at 1 and never repeat within one child.
    next_id: u64,
    /// Outstanding requests by id, ordered so expiry is deterministic.
    in_flight: BTreeMap<u64, (Timestamp, T)>,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending { next_id: 1, in_flight: BTreeMap::new() }
    }
}

impl<T> Pending<T> {
    /// Books a request sent at `now` and returns its id.
    pub fn insert(&mut self, now: Timestamp, purpose: T) -> Result<u64, Error> {
        if self.in_flight.len() >= REQUESTS_IN_FLIGHT_MAX {
            return Err(Error::InFlightFull);
        }
        let id = self.next_id;
        self.next_id += 1;
        let previous = self.in_flight.insert(id, (now.plus_ms(REQUEST_TIMEOUT_MS), purpose));
        assert!(previous.is_none(), "request ids never repeat");
        Ok(id)
    }

    /// Takes the request a response answers.
    pub fn take(&mut self, id: u64) -> Result<T, Error> {
        self.in_flight.remove(&id).map(|(_, purpose)| purpose).ok_or(Error::UnknownResponse { id: id.to_string() })
    }

    /// Removes and returns every request overdue at `now`, oldest id first.
    pub fn expire(&mut self, now: Timestamp) -> Vec<(u64, T)> {
        let overdue: Vec<u64> = self.in_flight.iter().filter(|(_, (due, _))| *due <= now).map(|(id, _)| *id).collect();
        overdue.into_iter().filter_map(|id| self.in_flight.remove(&id).map(|(_, purpose)| (id, purpose))).collect()
    }

    /// When the next request falls overdue.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.in_flight.values().map(|(due, _)| *due).min()
    }

    /// Removes the first request (by id) matching `pred`, without an answer.
    pub fn remove_where(&mut self, pred: impl Fn(&T) -> bool) -> Option<T> {
        let id = self.in_flight.iter().find(|(_, (_, purpose))| pred(purpose)).map(|(id, _)| *id)?;
        self.in_flight.remove(&id).map(|(_, purpose)| purpose)
    }

    /// Whether any request still matches `pred`.
    pub fn any(&self, pred: impl Fn(&T) -> bool) -> bool {
        self.in_flight.values().any(|(_, purpose)| pred(purpose))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_three_shapes() {
        assert_eq!(
            decode(r#"{"id":3,"result":{"ok":true}}"#),
            Ok(Incoming::Response { id: 3, outcome: Ok(json!({"ok": true})) })
        );
        assert_eq!(
            decode(r#"{"error":{"code":-32600,"message":"no active turn to steer"},"id":7}"#),
            Ok(Incoming::Response {
                id: 7,
                outcome: Err(RpcError { code: INVALID_REQUEST, message: "no active turn to steer".to_string() })
            })
        );
        assert_eq!(
            decode(r#"{"method":"turn/started","params":{"a":1}}"#),
            Ok(Incoming::Notification { method: "turn/started".to_string(), params: json!({"a": 1}) })
        );
        assert_eq!(
            decode(r#"{"id":"s1","method":"item/fileChange/requestApproval","params":{}}"#),
            Ok(Incoming::ServerRequest {
                id: json!("s1"),
                method: "item/fileChange/requestApproval".to_string(),
                params: json!({})
            })
        );
    }

    #[test]
    fn refuses_what_fits_no_message() {
        for line in ["", "[]", "{}", r#"{"method":3}"#, r#"{"id":1}"#, r#"{"id":1,"result":1,"error":{"code":1}}"#] {
            assert_eq!(decode(line).map_err(|e| e.code()), Err("MALFORMED"), "{line}");
        }
        assert_eq!(decode(r#"{"id":"x","result":1}"#).map_err(|e| e.code()), Err("UNKNOWN_RESPONSE"));
        let long = format!("\"{}\"", "a".repeat(LINE_BYTES_MAX));
        assert_eq!(decode(&long).map_err(|e| e.code()), Err("LINE_TOO_LONG"));
    }

    #[test]
    fn pending_matches_expires_and_bounds() {
        let mut pending = Pending::default();
        let a = pending.insert(Timestamp(0), "a").expect("room");
        let b = pending.insert(Timestamp(10), "b").expect("room");
        assert_eq!((a, b), (1, 2));
        assert_eq!(pending.next_deadline(), Some(Timestamp(REQUEST_TIMEOUT_MS)));
        assert_eq!(pending.take(b), Ok("b"));
        assert_eq!(pending.take(b), Err(Error::UnknownResponse { id: "2".to_string() }));
        assert_eq!(pending.expire(Timestamp(REQUEST_TIMEOUT_MS - 1)), vec![]);
        assert_eq!(pending.expire(Timestamp(REQUEST_TIMEOUT_MS)), vec![(1, "a")]);
        for _ in 0..REQUESTS_IN_FLIGHT_MAX {
            pending.insert(Timestamp(0), "x").expect("room");
        }
        assert_eq!(pending.insert(Timestamp(0), "y"), Err(Error::InFlightFull));
    }

    #[test]
    fn lines_are_json_rpc_two() {
        let parse = |line: String| serde_json::from_str::<Value>(&line).expect("JSON");
        assert_eq!(
            parse(request_line(1, "thread/read", json!({"threadId": "t"}))),
            json!({"jsonrpc": "2.0", "id": 1, "method": "thread/read", "params": {"threadId": "t"}})
        );
        assert_eq!(parse(notification_line("initialized", None)), json!({"jsonrpc": "2.0", "method": "initialized"}));
        assert_eq!(
            parse(error_line(&json!(5), METHOD_NOT_FOUND, "no")),
            json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32601, "message": "no"}})
        );
        assert_eq!(
            parse(result_line(&json!("s"), json!({"decision": "decline"}))),
            json!({"jsonrpc": "2.0", "id": "s", "result": {"decision": "decline"}})
        );
    }
}

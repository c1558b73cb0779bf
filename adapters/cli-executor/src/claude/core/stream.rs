//! The Claude core's reading side: each stream-json line of the child's stdout
//! (`command_lifecycle`, `system/init`, `system/api_retry`, `result`) turned into
//! acknowledgments, turn states and observations. The command side is in `mod.rs`.

use super::*;

impl Claude {
    /// A line from the child's stdout. A line that is not a stream-json message is an
    /// error and changes nothing.
    pub fn line(&mut self, now: Timestamp, line: &str) -> Result<(), Error> {
        if line.len() > LINE_BYTES_MAX {
            return Err(Error::LineTooLong { bytes: line.len() });
        }
        let msg: Value = serde_json::from_str(line).map_err(|e| Error::Malformed { detail: e.to_string() })?;
        let Some(kind) = msg.get("type").and_then(Value::as_str) else {
            return Err(Error::Malformed { detail: "a stream-json line without a type".to_string() });
        };
        let text = |key: &str| msg.get(key).and_then(Value::as_str);
        match kind {
            "command_lifecycle" => {
                let uuid = text("command_uuid").unwrap_or_default().to_string();
                match text("state") {
                    Some("queued") => self.queued_line(uuid),
                    Some("started") => self.started(&uuid),
                    _ => {}
                }
            }
            "user" if msg.get("isReplay").and_then(Value::as_bool) == Some(true) => {
                let uuid = text("uuid").unwrap_or_default();
                if msg.get("timestamp").is_none()
                    && let Some(at) = self.unacked.iter().position(|u| u.uuid == uuid)
                    && let Some(unacked) = self.unacked.remove(at)
                {
                    // Already in the session: echoed, not run again.
                    self.submitted(unacked.command, uuid, true);
                }
            }
            "system" if text("subtype") == Some("init") => {
                let confirmed = text("session_id");
                if confirmed.is_some() && confirmed != self.session.as_deref() {
                    let detail = format!(
                        "the CLI runs session {} instead of {}",
                        confirmed.unwrap_or_default(),
                        self.session.as_deref().unwrap_or_default()
                    );
                    let report = Report {
                        detail: Some(cut_detail(&detail)),
                        ..Report::bare(ConversationState::Error(ErrorKind::HostUiChanged))
                    };
                    self.state(report);
                }
                self.turn_activity();
                if let Some(report) = self.config.required_mcp.as_deref().and_then(|name| mcp_missing(&msg, name)) {
                    self.state(report);
                }
            }
            "system" if text("subtype") == Some("api_retry") => self.api_retry(&msg),
            "control_request" => self.control_request(&msg),
            "rate_limit_event" => self.rate_limit = msg.get("rate_limit_info").cloned(),
            "assistant" => {
                if let Some(error) = text("error") {
                    self.assistant_error = Some(error.to_string());
                }
                self.turn_activity();
                if std::mem::take(&mut self.retrying) {
                    // The turn moves again: the retry is over.
                    self.state(Report::bare(ConversationState::Generating));
                }
            }
            // `--resume` of a session with no transcript answers a `result` of no turn
            // (`num_turns:0`) before it exits: not a turn, and not foreign.
            "result" if self.turn.is_none() && msg.get("num_turns").and_then(Value::as_u64) == Some(0) => {}
            "result" => self.result(now, &msg),
            _ => {}
        }
        Ok(())
    }

    pub(super) fn queued_line(&mut self, uuid: String) {
        match self.unacked.iter().position(|u| u.uuid == uuid) {
            Some(at) => {
                let Some(unacked) = self.unacked.remove(at) else { return };
                self.submitted(unacked.command, &uuid, false);
                self.queued.push_back(Queued { command: unacked.command, kind: unacked.kind, uuid });
            }
            None if !self.ours(&uuid) => self.foreign(Some(uuid)),
            None => {}
        }
    }

    pub(super) fn started(&mut self, uuid: &str) {
        let queued = self.queued.iter().position(|q| q.uuid == uuid).and_then(|at| self.queued.remove(at));
        let ours = queued.is_some() || self.ours(uuid);
        match (&mut self.turn, queued) {
            (Some(_), Some(Queued { command, kind: CommandKind::Steer, .. })) => {
                self.effects.push_back(Effect::Steered { command, landed: Landed::Merged });
            }
            (Some(_), _) => {}
            (None, queued) => {
                if let Some(Queued { command, kind: CommandKind::Steer, .. }) = queued {
                    // Acknowledged only after the turn it was meant for had ended.
                    self.effects.push_back(Effect::Steered { command, landed: Landed::NextTurn });
                }
                self.turn = Some(Turn { ours, flagged: false });
                self.assistant_error = None;
                self.state(Report::bare(ConversationState::Generating));
            }
        }
        if !ours {
            self.foreign(Some(uuid.to_string()));
        }
    }

    /// Output that belongs to a turn: with none running, a turn nobody queued has begun.
    /// `system/api_retry`: the CLI retries its API call inside the running turn (network,
    /// login, server errors): the turn is reported still `generating`, with what the CLI
    /// said (`server_error (HTTP 500)`) and which retry.
    pub(super) fn api_retry(&mut self, msg: &Value) {
        self.turn_activity();
        self.retrying = true;
        let error = msg.get("error").and_then(Value::as_str).unwrap_or("API error");
        let status =
            msg.get("error_status").and_then(Value::as_u64).map(|s| format!(" (HTTP {s})")).unwrap_or_default();
        let attempt = msg.get("attempt").and_then(Value::as_u64).and_then(|a| u32::try_from(a).ok());
        let retry = CliRetry { reason: cut_detail(&format!("{error}{status}")).into(), attempt };
        self.state(Report { retry: Some(retry), ..Report::bare(ConversationState::Generating) });
    }

    pub(super) fn turn_activity(&mut self) {
        if self.turn.is_none() {
            self.retrying = false;
            self.turn = Some(Turn { ours: false, flagged: false });
            self.assistant_error = None;
            self.foreign(None);
            self.state(Report::bare(ConversationState::Generating));
        }
    }

    pub(super) fn result(&mut self, now: Timestamp, msg: &Value) {
        self.turn_activity();
        self.retrying = false;
        let uuids: Vec<&str> = msg
            .get("user_message_uuids")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(stranger) = uuids.iter().find(|u| !self.ours(u)) {
            let stranger = stranger.to_string();
            self.foreign(Some(stranger));
        }
        let text = msg.get("result").and_then(Value::as_str);
        let report = if msg.get("is_error").and_then(Value::as_bool) == Some(true) {
            let failure =
                limit::classify(msg, self.assistant_error.as_deref(), self.rate_limit.as_ref(), now, &*self.zones);
            Report {
                state: ConversationState::Error(failure.kind),
                block: None,
                until: failure.until,
                detail: failure.detail,
                retry: None,
            }
        } else {
            Report { block: text.map(tail), ..Report::bare(ConversationState::Idle) }
        };
        self.turn = None;
        self.assistant_error = None;
        self.approvals_gone();
        self.last = Some(report.clone());
        // Steers the turn did not take run as the next turn: said before the state that
        // ends the turn they missed (the engine books them as that next turn).
        let next: Vec<CommandId> =
            self.queued.iter().filter(|q| q.kind == CommandKind::Steer).map(|q| q.command).collect();
        for command in next {
            self.effects.push_back(Effect::Steered { command, landed: Landed::NextTurn });
        }
        self.queued.iter_mut().for_each(|q| q.kind = CommandKind::Send);
        self.state(report);
        if self.queued.is_empty()
            && self.unacked.is_empty()
            && let Some(held) = self.held.take()
        {
            // Idle delivery: the held send goes in now. A full table fails it, never panics.
            if let Err(error) = self.write(now, &held) {
                self.fail(held.id, "COMPOSER_BUSY", &error.to_string());
            }
        }
    }
}

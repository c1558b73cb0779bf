//! The notification checks (issue 31), over the durable records and what the model
//! receiver took (`notifier.rs`):
//!
//! - Once per episode: every durable event that opens an episode (`NoticeKind::of`) has
//!   exactly one notice per target, under the id made of its cursor and the target.
//! - None for a situation that never happened: every notice's episode is a durable event
//!   of its kind, and every id the receiver took is a durable notice.
//! - Never sent twice: the receiver takes an id again only after a daemon restart came
//!   between (the acknowledgement was lost with the crash), never otherwise.
//! - Nothing lost: once the run settled, every notice is delivered (and the receiver took
//!   it) or abandoned with its `notification.abandoned` event.

use engine::event::{Event, EventKind};
use engine::notify::{Notice, NoticeId, NoticeKind, NoticeStatus};
use std::collections::{BTreeMap, BTreeSet};

/// What the checks read.
pub struct NotifyLog<'a> {
    /// The durable events, by cursor.
    pub events: &'a [Event],
    /// The durable notices.
    pub notices: &'a [Notice],
    /// How many targets the daemon posts to.
    pub targets: usize,
    /// What the receiver took: (id, simulated ms), in order.
    pub received: &'a [(NoticeId, u64)],
    /// When the daemon (re)started, simulated ms.
    pub daemon_starts: &'a [u64],
    /// Whether the run ended calm long enough for every notice to settle.
    pub settled: bool,
}

/// Every notification obligation; the broken ones, in words.
pub fn notifications_honoured(log: NotifyLog<'_>) -> Vec<String> {
    let mut broken = Vec::new();
    let notices: BTreeMap<NoticeId, &Notice> = log.notices.iter().map(|n| (n.id, n)).collect();
    let events: BTreeMap<u64, &Event> = log.events.iter().map(|e| (e.cursor.0, e)).collect();
    for e in log.events {
        let Some(kind) = NoticeKind::of(&e.kind) else { continue };
        if log.targets == 0 {
            continue;
        }
        for t in 0..log.targets as u64 {
            let id = NoticeId::new(e.cursor, t);
            match notices.get(&id) {
                None => broken.push(format!("{} at #{} has no notice {id}", e.kind.name(), e.cursor)),
                Some(n) if n.kind != kind => broken.push(format!("{id} is {:?}, its event {}", n.kind, e.kind.name())),
                Some(_) => {}
            }
        }
    }
    for n in log.notices {
        let opened = events.get(&n.id.episode().0).and_then(|e| NoticeKind::of(&e.kind));
        if opened != Some(n.kind) {
            broken.push(format!("{} ({}) has no episode that opened it", n.id, n.kind.as_str()));
        }
        if n.id.target() >= log.targets as u64 {
            broken.push(format!("{} names a target that is not configured", n.id));
        }
    }
    let mut taken: BTreeMap<NoticeId, Vec<u64>> = BTreeMap::new();
    for (id, at) in log.received {
        if !notices.contains_key(id) {
            broken.push(format!("the receiver took {id}, which was never durable"));
        }
        taken.entry(*id).or_default().push(*at);
    }
    for (id, times) in &taken {
        for pair in times.windows(2) {
            let restarted = log.daemon_starts.iter().any(|s| (pair[0]..=pair[1]).contains(s));
            if !restarted {
                broken.push(format!("{id} was posted again at {} ms with no restart since {} ms", pair[1], pair[0]));
            }
        }
    }
    if log.settled {
        let abandoned: BTreeSet<NoticeId> = log
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::NotificationAbandoned { notice, .. } => Some(*notice),
                _ => None,
            })
            .collect();
        for n in log.notices {
            match n.status {
                NoticeStatus::Pending => broken.push(format!("{} is still pending", n.id)),
                NoticeStatus::Delivered(_) if !taken.contains_key(&n.id) => {
                    broken.push(format!("{} is booked delivered but the receiver never took it", n.id))
                }
                NoticeStatus::Abandoned(_) if !abandoned.contains(&n.id) => {
                    broken.push(format!("{} was abandoned without its event", n.id))
                }
                _ => {}
            }
        }
    }
    broken
}

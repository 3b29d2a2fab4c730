//! The recent events the status page shows: a bounded ring that a `tracing` layer fills
//! with every event at INFO or above (whatever the log's own filter), newest last.
//!
//! The server's subscriber ([`super::logging`]) installs the layer, so the ring sees the
//! server's events (start, shells connecting, administrative commands, refused requests,
//! flushes and compactions it observes) and the engine's, once the engine emits them.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// Events the ring keeps; older ones are dropped.
pub const MAX_RECENT_EVENTS: usize = 200;
/// Longest text kept of one event (message and fields), in bytes.
const MAX_EVENT_TEXT_BYTES: usize = 1024;

/// One event as the status page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentEvent {
    /// When it was recorded.
    pub at: SystemTime,
    /// Its level.
    pub level: Level,
    /// Where it came from (`strata::server::admin`, ...).
    pub target: String,
    /// Its message, then its other fields as `name=value`.
    pub text: String,
}

/// The ring of recent events; cheap to share.
#[derive(Debug)]
pub struct RecentEvents {
    events: Mutex<VecDeque<RecentEvent>>,
    capacity: usize,
}

impl RecentEvents {
    /// A ring keeping the last `capacity` events.
    pub fn new(capacity: usize) -> Arc<RecentEvents> {
        Arc::new(RecentEvents {
            events: Mutex::new(VecDeque::with_capacity(capacity)),
            capacity,
        })
    }

    /// Records `event`, dropping the oldest when full.
    pub fn push(&self, event: RecentEvent) {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        if events.len() == self.capacity {
            events.pop_front();
        }
        if self.capacity > 0 {
            events.push_back(event);
        }
    }

    /// The events kept, newest first.
    pub fn newest_first(&self) -> Vec<RecentEvent> {
        let events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        events.iter().rev().cloned().collect()
    }

    /// A `tracing` layer that records events into this ring.
    pub fn layer(self: &Arc<Self>) -> RecentEventsLayer {
        RecentEventsLayer {
            events: self.clone(),
        }
    }
}

/// Records every event it sees into a [`RecentEvents`] ring (filter it per layer).
#[derive(Debug, Clone)]
pub struct RecentEventsLayer {
    events: Arc<RecentEvents>,
}

impl<S: Subscriber> Layer<S> for RecentEventsLayer {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let mut text = EventText::default();
        event.record(&mut text);
        let metadata = event.metadata();
        self.events.push(RecentEvent {
            at: SystemTime::now(),
            level: *metadata.level(),
            target: metadata.target().to_owned(),
            text: text.finish(),
        });
    }
}

/// An event's message and fields as one line of text, bounded.
#[derive(Default)]
struct EventText {
    message: String,
    fields: String,
}

impl EventText {
    fn finish(self) -> String {
        let mut text = self.message;
        if !self.fields.is_empty() {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&self.fields);
        }
        if text.len() > MAX_EVENT_TEXT_BYTES {
            let mut end = MAX_EVENT_TEXT_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push('…');
        }
        text
    }
}

impl Visit for EventText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if self.message.len() + self.fields.len() > MAX_EVENT_TEXT_BYTES {
            return;
        }
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
            return;
        }
        if !self.fields.is_empty() {
            self.fields.push(' ');
        }
        let _ = write!(self.fields, "{}={value:?}", field.name());
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_events_with_their_fields() {
        let ring = RecentEvents::new(3);
        let subscriber = tracing_subscriber::registry().with(ring.layer());
        tracing::subscriber::with_default(subscriber, || {
            for number in 0..5 {
                tracing::info!(target: "test", number, peer = "p", "event {number}");
            }
            tracing::warn!(target: "test", "<b>bold</b>");
        });
        let events = ring.newest_first();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].text, "<b>bold</b>");
        assert_eq!(events[0].level, Level::WARN);
        assert_eq!(events[1].text, "event 4 number=4 peer=\"p\"");
        assert_eq!(events[2].text, "event 3 number=3 peer=\"p\"");
        assert_eq!(events[2].target, "test");
    }

    #[test]
    fn long_events_are_cut() {
        let ring = RecentEvents::new(1);
        let subscriber = tracing_subscriber::registry().with(ring.layer());
        let long = "é".repeat(2000);
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("{long}");
        });
        let text = &ring.newest_first()[0].text;
        assert!(
            text.len() <= MAX_EVENT_TEXT_BYTES + '…'.len_utf8(),
            "{}",
            text.len()
        );
        assert!(text.ends_with('…'));
    }
}

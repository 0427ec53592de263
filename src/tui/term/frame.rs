//! Frame scheduling: any number of redraw requests between two frames make
//! one frame, and frames are at least `interval` apart, so a fast stream of
//! deltas never redraws per token and an idle app never redraws at all.

use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct FrameClock {
    interval: Duration,
    /// Earliest moment of the next frame.
    next: Instant,
    requested: bool,
}

impl FrameClock {
    /// A clock whose first frame is due at once.
    pub fn new(interval: Duration, now: Instant) -> Self {
        FrameClock {
            interval,
            next: now,
            requested: true,
        }
    }

    /// Something changed: a frame is wanted (coalesced with any pending request).
    pub fn request(&mut self) {
        self.requested = true;
    }

    /// When to draw next, or `None` when nothing needs drawing.
    pub fn due(&self) -> Option<Instant> {
        self.requested.then_some(self.next)
    }

    /// A frame was drawn at `now`.
    pub fn drawn(&mut self, now: Instant) {
        self.requested = false;
        self.next = now + self.interval;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_coalesce_and_frames_are_capped() {
        let t0 = Instant::now();
        let interval = Duration::from_millis(16);
        let mut clock = FrameClock::new(interval, t0);
        assert_eq!(clock.due(), Some(t0), "first frame at once");
        clock.drawn(t0);
        assert_eq!(clock.due(), None, "idle: no frame, no tick");
        for _ in 0..1000 {
            clock.request();
        }
        assert_eq!(
            clock.due(),
            Some(t0 + interval),
            "a burst makes one frame, after the interval"
        );
        clock.drawn(t0 + interval);
        assert_eq!(clock.due(), None);
    }
}

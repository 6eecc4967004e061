//! Timestamps as they appear in records and answers: RFC 3339, UTC,
//! millisecond precision (`2026-11-29T20:50:00.123Z`).

use std::fmt;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(SystemTime);

impl Timestamp {
    pub fn now() -> Self {
        Timestamp(SystemTime::now())
    }

    pub fn system_time(self) -> SystemTime {
        self.0
    }

    /// How long ago this was; zero when it lies in the future.
    pub fn age(self) -> Duration {
        SystemTime::now().duration_since(self.0).unwrap_or_default()
    }

    pub fn parse(text: &str) -> Result<Self, humantime::TimestampError> {
        humantime::parse_rfc3339_weak(text).map(Timestamp)
    }
}

impl From<SystemTime> for Timestamp {
    fn from(time: SystemTime) -> Self {
        Timestamp(time)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_rfc3339_millis(self.0))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_json() {
        let at = Timestamp::parse("2026-11-29T20:50:00.123Z").map_err(|e| e.to_string());
        let json = at.map(|t| serde_json::to_string(&t).unwrap_or_default());
        assert_eq!(json.as_deref(), Ok("\"2026-11-29T20:50:00.123Z\""));
        assert!(serde_json::from_str::<Timestamp>("\"yesterday\"").is_err());
    }
}

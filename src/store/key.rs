//! Which object keys scafo accepts, the same for every backend.

use super::StoreError;

/// The longest key, in bytes (S3's own limit).
pub const MAX_KEY_BYTES: usize = 1024;

/// Checks a key: non-empty, at most 1 024 bytes, no control characters, no
/// leading `/`, and no empty, `.` or `..` segment. Spaces, `+`, `%` and any
/// other Unicode are fine. The rule is shared so that a key valid on S3 is
/// valid on the file store and the other way round.
pub fn validate_key(key: &str) -> Result<(), StoreError> {
    let bad = |rule| {
        Err(StoreError::InvalidKey {
            key: key.to_owned(),
            rule,
        })
    };
    if key.is_empty() {
        return bad("must not be empty");
    }
    if key.len() > MAX_KEY_BYTES {
        return bad("must be at most 1024 bytes");
    }
    if key.chars().any(char::is_control) {
        return bad("must not contain control characters");
    }
    if key
        .split('/')
        .any(|segment| segment.is_empty() || segment == "." || segment == "..")
    {
        return bad("must not have an empty, '.' or '..' segment");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_and_odd_keys() {
        for key in [
            "a",
            "registry/fleet.json",
            "with space/x+y%z",
            "ünï/cødé",
            "a.b/..c",
        ] {
            assert!(validate_key(key).is_ok(), "{key}");
        }
    }

    #[test]
    fn refuses_what_no_backend_can_hold_alike() {
        let long = "x".repeat(MAX_KEY_BYTES + 1);
        for key in [
            "",
            "/a",
            "a/",
            "a//b",
            "a/./b",
            "../a",
            "a\nb",
            long.as_str(),
        ] {
            assert!(
                matches!(validate_key(key), Err(StoreError::InvalidKey { .. })),
                "{key:?}"
            );
        }
    }
}

//! Bucket URLs: `file:///absolute/path` or `s3://bucket[/prefix]`.

use std::fmt;
use std::path::PathBuf;

/// Where the registry lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BucketUrl {
    /// The embedded store: a local directory.
    File(PathBuf),
    /// An S3 bucket, optionally under a key prefix (no leading or trailing `/`).
    S3 {
        bucket: String,
        prefix: Option<String>,
    },
}

/// Connection settings for S3-compatible stores. `None` means the AWS SDK's
/// own default (environment, profile, instance metadata…).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct S3Settings {
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub force_path_style: Option<bool>,
}

impl BucketUrl {
    /// Parses a bucket URL; the error is the rule that was broken.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(path) = text.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err("a file:// bucket must name an absolute path, e.g. file:///var/lib/scafo/bucket".into());
            }
            let trimmed = path.trim_end_matches('/');
            return Ok(BucketUrl::File(PathBuf::from(if trimmed.is_empty() {
                "/"
            } else {
                trimmed
            })));
        }
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = match rest.split_once('/') {
                Some((bucket, prefix)) => (bucket, prefix.trim_matches('/')),
                None => (rest, ""),
            };
            if !valid_bucket_name(bucket) {
                return Err(format!(
                    "{bucket:?} is not an S3 bucket name (3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit)"
                ));
            }
            if prefix.split('/').any(|s| s == "." || s == "..")
                || prefix.contains("//")
                || prefix.chars().any(char::is_control)
            {
                return Err(
                    "the key prefix after the bucket must not contain empty, '.' or '..' segments"
                        .into(),
                );
            }
            return Ok(BucketUrl::S3 {
                bucket: bucket.to_owned(),
                prefix: (!prefix.is_empty()).then(|| prefix.to_owned()),
            });
        }
        Err("must be s3://bucket[/prefix] or file:///absolute/path".into())
    }
}

fn valid_bucket_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (3..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'.' || *b == b'-')
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
}

impl fmt::Display for BucketUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BucketUrl::File(path) => write!(f, "file://{}", path.display()),
            BucketUrl::S3 {
                bucket,
                prefix: Some(prefix),
            } => write!(f, "s3://{bucket}/{prefix}"),
            BucketUrl::S3 {
                bucket,
                prefix: None,
            } => write!(f, "s3://{bucket}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_schemes() {
        assert_eq!(
            BucketUrl::parse("file:///var/lib/scafo/bucket/"),
            Ok(BucketUrl::File("/var/lib/scafo/bucket".into()))
        );
        assert_eq!(
            BucketUrl::parse("s3://fleet-a"),
            Ok(BucketUrl::S3 {
                bucket: "fleet-a".into(),
                prefix: None
            })
        );
        assert_eq!(
            BucketUrl::parse("s3://fleet-a/prod/eu/"),
            Ok(BucketUrl::S3 {
                bucket: "fleet-a".into(),
                prefix: Some("prod/eu".into())
            })
        );
        assert_eq!(
            BucketUrl::parse("s3://fleet-a/prod").map(|u| u.to_string()),
            Ok("s3://fleet-a/prod".into())
        );
    }

    #[test]
    fn refuses_what_it_cannot_open() {
        for bad in [
            "",
            "fleet",
            "file://relative",
            "s3://",
            "s3://Upper",
            "s3://ab",
            "s3://-x-",
            "s3://b/a/../c",
            "http://x",
        ] {
            assert!(BucketUrl::parse(bad).is_err(), "{bad}");
        }
    }
}

//! The S3 backend: any store that honours `If-None-Match: *` and `If-Match`
//! on PutObject (AWS S3, moto's server, …), through aws-sdk-s3.
//!
//! Credentials come from the standard AWS chain (environment, profile, SSO,
//! instance metadata); endpoint, region and path style from [`S3Settings`].
//! 412 `PreconditionFailed`, 409 `ConditionalRequestConflict` and 404 on an
//! `If-Match` all mean the same thing here: [`StoreError::Conflict`].

use std::path::Path;
use std::time::{Duration, SystemTime};

use aws_config::BehaviorVersion;
use aws_config::meta::region::RegionProviderChain;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::{Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::{ByteStream, DateTime};

use super::{
    ETag, ListPage, ListRequest, Meta, Object, ObjectStore, PAGE_SIZE, S3Settings, StoreError,
    StoreFuture, validate_key,
};

#[derive(Debug, Clone)]
pub struct S3Store {
    client: Client,
    bucket: String,
    /// Prepended to every key, with its trailing `/` (empty for none).
    prefix: String,
}

/// How a failed request is read: a conditional write's 409/412 (and 404 for
/// `If-Match`) is a lost race; otherwise those are failures like any other.
#[derive(Clone, Copy, PartialEq)]
enum Condition {
    None,
    Create,
    IfMatch,
}

impl S3Store {
    /// Builds a client from the standard AWS configuration chain, overridden
    /// by `settings`. Nothing is sent until the first request.
    pub async fn connect(bucket: &str, prefix: Option<&str>, settings: &S3Settings) -> Self {
        let region = RegionProviderChain::first_try(settings.region.clone().map(Region::new))
            .or_default_provider()
            .or_else(Region::new("us-east-1"));
        let shared = aws_config::defaults(BehaviorVersion::latest())
            .region(region)
            .load()
            .await;
        let mut config = aws_sdk_s3::config::Builder::from(&shared)
            // Several S3-compatible stores reject the SDK's newer default checksums.
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired)
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(Duration::from_secs(3))
                    .read_timeout(Duration::from_secs(60))
                    .build(),
            );
        if let Some(endpoint) = &settings.endpoint {
            config = config.endpoint_url(endpoint);
        }
        if let Some(path_style) = settings.force_path_style {
            config = config.force_path_style(path_style);
        }
        Self::new(Client::from_conf(config.build()), bucket, prefix)
    }

    /// Wraps a client built elsewhere (tests use static credentials).
    pub fn new(client: Client, bucket: &str, prefix: Option<&str>) -> Self {
        S3Store {
            client,
            bucket: bucket.to_owned(),
            prefix: prefix
                .filter(|p| !p.is_empty())
                .map(|p| format!("{}/", p.trim_matches('/')))
                .unwrap_or_default(),
        }
    }

    fn full_key(&self, key: &str) -> Result<String, StoreError> {
        validate_key(key)?;
        Ok(format!("{}{key}", self.prefix))
    }

    async fn put_with(
        &self,
        key: &str,
        bytes: Vec<u8>,
        condition: Condition,
        etag: Option<&ETag>,
    ) -> Result<ETag, StoreError> {
        let request = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(self.full_key(key)?)
            .content_type("application/octet-stream")
            .body(ByteStream::from(bytes));
        let request = match condition {
            Condition::Create => request.if_none_match("*"),
            Condition::IfMatch => request.set_if_match(etag.map(|e| e.as_str().to_owned())),
            Condition::None => request,
        };
        let output = request
            .send()
            .await
            .map_err(|e| self.classify(key, e, condition))?;
        output
            .e_tag()
            .map(ETag::new)
            .ok_or_else(|| StoreError::Unavailable(format!("PUT {key}: the store sent no ETag")))
    }

    /// GetObject, with a missing key (not a missing bucket) as `None`.
    async fn get_object(
        &self,
        key: &str,
    ) -> Result<Option<aws_sdk_s3::operation::get_object::GetObjectOutput>, StoreError> {
        let sent = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(self.full_key(key)?)
            .send()
            .await;
        match sent {
            Ok(output) => Ok(Some(output)),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(self.classify(key, e, Condition::None)),
        }
    }

    fn classify<E>(&self, key: &str, err: SdkError<E>, condition: Condition) -> StoreError
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let status = err.raw_response().map(|r| r.status().as_u16());
        let code = err.code().map(str::to_owned);
        if code.as_deref() == Some("NoSuchBucket") {
            return StoreError::NoSuchBucket {
                bucket: self.bucket.clone(),
            };
        }
        match (status, condition) {
            (Some(412 | 409), Condition::Create | Condition::IfMatch)
            | (Some(404), Condition::IfMatch) => StoreError::Conflict {
                key: key.to_owned(),
            },
            (Some(401 | 403), _) => StoreError::Denied {
                bucket: self.bucket.clone(),
                detail: code.unwrap_or_else(|| "AccessDenied".into()),
            },
            _ => StoreError::Unavailable(format!(
                "s3://{}/{}{key}: {}",
                self.bucket,
                self.prefix,
                DisplayErrorContext(&err)
            )),
        }
    }
}

fn is_missing<E: ProvideErrorMetadata>(err: &SdkError<E>) -> bool {
    let status = err.raw_response().map(|r| r.status().as_u16());
    status == Some(404) && err.code() != Some("NoSuchBucket")
}

fn system_time(time: Option<&DateTime>) -> SystemTime {
    time.and_then(|t| SystemTime::try_from(*t).ok())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

impl ObjectStore for S3Store {
    fn get<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Object>> {
        Box::pin(async move {
            let Some(output) = self.get_object(key).await? else {
                return Ok(None);
            };
            let etag = output.e_tag().map(ETag::new).ok_or_else(|| {
                StoreError::Unavailable(format!("GET {key}: the store sent no ETag"))
            })?;
            let bytes = output
                .body
                .collect()
                .await
                .map_err(|e| StoreError::Unavailable(format!("GET {key}: {e}")))?
                .to_vec();
            Ok(Some(Object { bytes, etag }))
        })
    }

    fn head<'a>(&'a self, key: &'a str) -> StoreFuture<'a, Option<Meta>> {
        Box::pin(async move {
            let sent = self
                .client
                .head_object()
                .bucket(&self.bucket)
                .key(self.full_key(key)?)
                .send()
                .await;
            let output = match sent {
                Ok(output) => output,
                Err(e) if is_missing(&e) => return Ok(None),
                Err(e) => return Err(self.classify(key, e, Condition::None)),
            };
            Ok(Some(Meta {
                key: key.to_owned(),
                etag: ETag::new(output.e_tag().unwrap_or_default()),
                size: output.content_length().unwrap_or(0).max(0) as u64,
                modified: system_time(output.last_modified()),
            }))
        })
    }

    fn put_create<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        Box::pin(self.put_with(key, bytes, Condition::Create, None))
    }

    fn put_if_match<'a>(
        &'a self,
        key: &'a str,
        bytes: Vec<u8>,
        etag: &'a ETag,
    ) -> StoreFuture<'a, ETag> {
        Box::pin(self.put_with(key, bytes, Condition::IfMatch, Some(etag)))
    }

    fn put<'a>(&'a self, key: &'a str, bytes: Vec<u8>) -> StoreFuture<'a, ETag> {
        Box::pin(self.put_with(key, bytes, Condition::None, None))
    }

    fn put_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, ETag> {
        Box::pin(async move {
            let body = ByteStream::from_path(path).await.map_err(|e| {
                StoreError::Unavailable(format!("cannot stream {}: {e}", path.display()))
            })?;
            let output = self
                .client
                .put_object()
                .bucket(&self.bucket)
                .key(self.full_key(key)?)
                .content_type("application/octet-stream")
                .body(body)
                .send()
                .await
                .map_err(|e| self.classify(key, e, Condition::None))?;
            output.e_tag().map(ETag::new).ok_or_else(|| {
                StoreError::Unavailable(format!("PUT {key}: the store sent no ETag"))
            })
        })
    }

    fn get_file<'a>(&'a self, key: &'a str, path: &'a Path) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let Some(output) = self.get_object(key).await? else {
                return Ok(false);
            };
            let failed = |e: std::io::Error| {
                StoreError::Unavailable(format!("GET {key} into {}: {e}", path.display()))
            };
            let mut file = tokio::fs::File::create(path).await.map_err(failed)?;
            let mut body = output.body.into_async_read();
            tokio::io::copy(&mut body, &mut file)
                .await
                .map_err(failed)?;
            tokio::io::AsyncWriteExt::flush(&mut file)
                .await
                .map_err(failed)?;
            Ok(true)
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.client
                .delete_object()
                .bucket(&self.bucket)
                .key(self.full_key(key)?)
                .send()
                .await
                .map_err(|e| self.classify(key, e, Condition::None))?;
            Ok(())
        })
    }

    fn list<'a>(&'a self, request: ListRequest) -> StoreFuture<'a, ListPage> {
        Box::pin(async move {
            let output = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(format!("{}{}", self.prefix, request.prefix))
                .set_delimiter(request.delimited.then(|| "/".to_owned()))
                .set_continuation_token(request.token.clone())
                .max_keys(PAGE_SIZE as i32)
                .send()
                .await
                .map_err(|e| self.classify(&request.prefix, e, Condition::None))?;
            let strip = |key: &str| key.strip_prefix(&self.prefix).unwrap_or(key).to_owned();
            Ok(ListPage {
                objects: output
                    .contents()
                    .iter()
                    .filter_map(|o| {
                        Some(Meta {
                            key: strip(o.key()?),
                            etag: ETag::new(o.e_tag().unwrap_or_default()),
                            size: o.size().unwrap_or(0).max(0) as u64,
                            modified: system_time(o.last_modified()),
                        })
                    })
                    .collect(),
                prefixes: output
                    .common_prefixes()
                    .iter()
                    .filter_map(|p| p.prefix().map(strip))
                    .collect(),
                next: output
                    .is_truncated()
                    .unwrap_or(false)
                    .then(|| output.next_continuation_token().map(str::to_owned))
                    .flatten(),
            })
        })
    }

    fn location(&self) -> String {
        match self.prefix.strip_suffix('/') {
            Some(prefix) => format!("s3://{}/{prefix}", self.bucket),
            None => format!("s3://{}", self.bucket),
        }
    }

    fn kind(&self) -> &'static str {
        "s3"
    }
}

//! Where traces go and which are kept: the standard OpenTelemetry environment variables
//! (the names every collector's documentation uses), plus `--otlp-endpoint` /
//! `MUSTER_OTLP_ENDPOINT`. Read once at start; a value that cannot be honoured stops the
//! start with one `error:` line rather than being ignored.

use anyhow::{anyhow, bail};

/// Where the exporter's path starts under a base endpoint (OTLP/HTTP).
const TRACES_PATH: &str = "/v1/traces";

/// The export settings, when traces are on.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSettings {
    /// The full URL spans are sent to (with `POST`).
    pub endpoint: String,
    /// `service.name`.
    pub service_name: String,
    /// Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`), in order.
    pub resource: Vec<(String, String)>,
    /// Which traces are kept.
    pub sampler: SamplerSetting,
}

/// `OTEL_TRACES_SAMPLER` (with its argument).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SamplerSetting {
    /// Every trace.
    AlwaysOn,
    /// None.
    AlwaysOff,
    /// This fraction of the traces, by trace id.
    Ratio(f64),
    /// As the caller's `traceparent` says; traces started here by the inner sampler.
    ParentBased(ParentlessSampler),
}

/// What a parent-based sampler does with a trace started here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParentlessSampler {
    /// Keep it.
    AlwaysOn,
    /// Drop it.
    AlwaysOff,
    /// Keep this fraction.
    Ratio(f64),
}

/// Reads the settings: `None` when no endpoint is set (or `OTEL_SDK_DISABLED=true`).
/// `flag` is `--otlp-endpoint` / `MUSTER_OTLP_ENDPOINT` (a base URL, like
/// `OTEL_EXPORTER_OTLP_ENDPOINT`), which wins over the standard variables; `env` looks a
/// variable up; `service` is the `service.name` when neither `OTEL_SERVICE_NAME` nor the
/// resource attributes name one (`muster`, `muster-worker`).
pub fn read(
    flag: Option<&str>,
    service: &str,
    env: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<Option<TraceSettings>> {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if let Some(disabled) = set("OTEL_SDK_DISABLED") {
        match disabled.trim().to_ascii_lowercase().as_str() {
            "true" => return Ok(None),
            "false" => {}
            _ => bail!("OTEL_SDK_DISABLED must be true or false, got {disabled:?}"),
        }
    }
    let endpoint = if let Some(base) = flag.filter(|value| !value.trim().is_empty()) {
        under_base("MUSTER_OTLP_ENDPOINT", base)?
    } else if let Some(full) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        checked_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", full.trim())?
    } else if let Some(base) = set("OTEL_EXPORTER_OTLP_ENDPOINT") {
        under_base("OTEL_EXPORTER_OTLP_ENDPOINT", &base)?
    } else {
        return Ok(None);
    };
    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(protocol) = set(name) {
            if protocol.trim() != "http/protobuf" {
                bail!(
                    "{name} must be http/protobuf (the protocol this build exports with), \
                     got {protocol:?}"
                );
            }
            break;
        }
    }
    let resource = match set("OTEL_RESOURCE_ATTRIBUTES") {
        Some(list) => resource_attributes(&list)?,
        None => Vec::new(),
    };
    let service_name = set("OTEL_SERVICE_NAME")
        .map(|name| name.trim().to_owned())
        .or_else(|| {
            resource
                .iter()
                .find(|(key, _)| key == "service.name")
                .map(|(_, value)| value.clone())
        })
        .unwrap_or_else(|| service.to_owned());
    let sampler = sampler(
        set("OTEL_TRACES_SAMPLER").as_deref(),
        set("OTEL_TRACES_SAMPLER_ARG").as_deref(),
    )?;
    Ok(Some(TraceSettings {
        endpoint,
        service_name,
        resource,
        sampler,
    }))
}

/// The dashboard's trace link template (`MUSTER_TRACE_URL`), checked: an `http://` or
/// `https://` URL with `{traceId}` in it.
pub fn trace_url(template: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(template) = template.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if !template.contains("{traceId}") {
        bail!("MUSTER_TRACE_URL must contain {{traceId}}, got {template:?}");
    }
    checked_url("MUSTER_TRACE_URL", &template.replace("{traceId}", "0"))?;
    Ok(Some(template.to_owned()))
}

/// `<base>/v1/traces`.
fn under_base(name: &str, base: &str) -> anyhow::Result<String> {
    let base = checked_url(name, base.trim())?;
    Ok(format!("{}{TRACES_PATH}", base.trim_end_matches('/')))
}

/// `url` if it is an `http://` or `https://` URL with a host.
fn checked_url(name: &str, url: &str) -> anyhow::Result<String> {
    let parsed = url::Url::parse(url).map_err(|err| anyhow!("{name} is not a URL ({err})"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        bail!("{name} must be an http:// or https:// URL, got {url:?}");
    }
    Ok(url.to_owned())
}

/// `key=value,key=value`, values percent-decoded (the W3C Baggage form the variable
/// uses).
fn resource_attributes(list: &str) -> anyhow::Result<Vec<(String, String)>> {
    list.split(',')
        .filter(|item| !item.trim().is_empty())
        .map(|item| {
            let (key, value) = item.split_once('=').ok_or_else(|| {
                anyhow!("OTEL_RESOURCE_ATTRIBUTES must be key=value pairs, got {item:?}")
            })?;
            let key = key.trim();
            if key.is_empty() {
                bail!("OTEL_RESOURCE_ATTRIBUTES has an empty key in {item:?}");
            }
            let value = percent_decoded(value.trim()).ok_or_else(|| {
                anyhow!("OTEL_RESOURCE_ATTRIBUTES has a bad percent-escape in {item:?}")
            })?;
            Ok((key.to_owned(), value))
        })
        .collect()
}

/// `text` with its `%XX` escapes decoded; `None` for a broken escape or bad UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The sampler of `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` (default
/// `parentbased_always_on`, ratio 1.0).
fn sampler(name: Option<&str>, arg: Option<&str>) -> anyhow::Result<SamplerSetting> {
    let ratio = || -> anyhow::Result<f64> {
        let Some(arg) = arg else { return Ok(1.0) };
        match arg.trim().parse::<f64>() {
            Ok(ratio) if (0.0..=1.0).contains(&ratio) => Ok(ratio),
            _ => bail!("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got {arg:?}"),
        }
    };
    Ok(match name.map_or("parentbased_always_on", str::trim) {
        "always_on" => SamplerSetting::AlwaysOn,
        "always_off" => SamplerSetting::AlwaysOff,
        "traceidratio" => SamplerSetting::Ratio(ratio()?),
        "parentbased_always_on" => SamplerSetting::ParentBased(ParentlessSampler::AlwaysOn),
        "parentbased_always_off" => SamplerSetting::ParentBased(ParentlessSampler::AlwaysOff),
        "parentbased_traceidratio" => {
            SamplerSetting::ParentBased(ParentlessSampler::Ratio(ratio()?))
        }
        other => bail!(
            "OTEL_TRACES_SAMPLER must be always_on, always_off, traceidratio, \
                 parentbased_always_on, parentbased_always_off or parentbased_traceidratio, \
                 got {other:?}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn with(vars: &[(&str, &str)], flag: Option<&str>) -> anyhow::Result<Option<TraceSettings>> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        read(flag, "muster", |name| vars.get(name).cloned())
    }

    fn error(vars: &[(&str, &str)]) -> String {
        with(vars, None).unwrap_err().to_string()
    }

    #[test]
    fn a_trace_link_template_needs_the_trace_id_and_a_web_url() {
        assert_eq!(trace_url(None).unwrap(), None);
        assert_eq!(
            trace_url(Some("http://jaeger:16686/trace/{traceId}")).unwrap(),
            Some("http://jaeger:16686/trace/{traceId}".to_owned())
        );
        for bad in ["http://jaeger:16686/trace/", "javascript:alert({traceId})"] {
            let err = trace_url(Some(bad)).unwrap_err().to_string();
            assert!(err.contains("MUSTER_TRACE_URL"), "{err}");
        }
    }

    #[test]
    fn no_endpoint_means_no_traces() {
        assert_eq!(with(&[], None).unwrap(), None);
        assert_eq!(with(&[("OTEL_SERVICE_NAME", "x")], None).unwrap(), None);
        assert_eq!(
            with(
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                    ("OTEL_SDK_DISABLED", "true")
                ],
                None
            )
            .unwrap(),
            None
        );
    }

    #[test]
    fn the_endpoints_follow_the_specification_and_the_flag_wins() {
        let endpoint = |vars: &[(&str, &str)], flag| with(vars, flag).unwrap().unwrap().endpoint;
        assert_eq!(
            endpoint(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")], None),
            "http://c:4318/v1/traces"
        );
        assert_eq!(
            endpoint(
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                    (
                        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                        "https://t:443/custom/path"
                    )
                ],
                None
            ),
            "https://t:443/custom/path"
        );
        assert_eq!(
            endpoint(
                &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t/x")],
                Some("http://flag:4318")
            ),
            "http://flag:4318/v1/traces"
        );
    }

    #[test]
    fn defaults_are_parent_based_always_on_as_muster() {
        let settings = with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")], None)
            .unwrap()
            .unwrap();
        assert_eq!(settings.service_name, "muster");
        assert_eq!(
            settings.sampler,
            SamplerSetting::ParentBased(ParentlessSampler::AlwaysOn)
        );
        assert!(settings.resource.is_empty());
    }

    #[test]
    fn service_name_resource_and_sampler_are_read() {
        let settings = with(
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                (
                    "OTEL_RESOURCE_ATTRIBUTES",
                    "deployment.environment=prod, team=a%20b,service.name=from-list",
                ),
                ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ],
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(settings.service_name, "from-list");
        assert_eq!(
            settings.resource[..2],
            [
                ("deployment.environment".to_owned(), "prod".to_owned()),
                ("team".to_owned(), "a b".to_owned())
            ]
        );
        assert_eq!(
            settings.sampler,
            SamplerSetting::ParentBased(ParentlessSampler::Ratio(0.25))
        );
        let named = with(
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_SERVICE_NAME", "muster-eu"),
                ("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-list"),
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ],
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(named.service_name, "muster-eu");
        assert_eq!(named.sampler, SamplerSetting::Ratio(1.0));
    }

    #[test]
    fn a_bad_value_is_an_error_that_names_the_variable() {
        let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        for (vars, name) in [
            (
                vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318")],
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            ),
            (
                vec![("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://c/x")],
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            ),
            (
                vec![base, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
                "OTEL_EXPORTER_OTLP_PROTOCOL",
            ),
            (
                vec![base, ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")],
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            ),
            (
                vec![base, ("OTEL_TRACES_SAMPLER", "sometimes")],
                "OTEL_TRACES_SAMPLER",
            ),
            (
                vec![
                    base,
                    ("OTEL_TRACES_SAMPLER", "traceidratio"),
                    ("OTEL_TRACES_SAMPLER_ARG", "1.5"),
                ],
                "OTEL_TRACES_SAMPLER_ARG",
            ),
            (
                vec![base, ("OTEL_RESOURCE_ATTRIBUTES", "novalue")],
                "OTEL_RESOURCE_ATTRIBUTES",
            ),
            (
                vec![base, ("OTEL_RESOURCE_ATTRIBUTES", "k=%zz")],
                "OTEL_RESOURCE_ATTRIBUTES",
            ),
            (
                vec![base, ("OTEL_SDK_DISABLED", "maybe")],
                "OTEL_SDK_DISABLED",
            ),
        ] {
            let message = error(&vars);
            assert!(message.contains(name), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
        assert!(
            with(&[], Some("not a url"))
                .unwrap_err()
                .to_string()
                .contains("MUSTER_OTLP_ENDPOINT")
        );
    }
}

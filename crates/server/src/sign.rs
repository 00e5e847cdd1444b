//! `muster sign`: the headers a signed agent request needs.

use muster_auth::signing::{canonical_message, sign};

use crate::cli::{SignArgs, SignFormat};

/// The four header lines (or curl arguments) for `args`, at `now` unless given.
pub fn signature_headers(args: &SignArgs, now: i64) -> String {
    let timestamp = args.timestamp.unwrap_or(now).to_string();
    let nonce = args
        .nonce
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let method = args.method.to_ascii_uppercase();
    let message = canonical_message(
        &method,
        &args.path,
        &timestamp,
        &nonce,
        args.body.as_bytes(),
    );
    let signature = sign(&args.secret, &message);
    let headers = [
        ("X-Agent-ID", args.agent_id.as_str()),
        ("X-Timestamp", timestamp.as_str()),
        ("X-Nonce", nonce.as_str()),
        ("X-Signature", signature.as_str()),
    ];
    match args.format {
        SignFormat::Headers => {
            let lines: Vec<String> = headers.iter().map(|(n, v)| format!("{n}: {v}")).collect();
            lines.join("\n") + "\n"
        }
        SignFormat::Curl => {
            let words: Vec<String> = headers.iter().map(|(n, v)| format!("-H {n}:{v}")).collect();
            words.join(" ") + "\n"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The second agent vector of spec/signing-vectors.md.
    #[test]
    fn reproduces_the_documented_vector() {
        let args = SignArgs {
            agent_id: "hr-acme".into(),
            secret: "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a".into(),
            method: "post".into(),
            path: "/tasks".into(),
            body: r#"{"title":"Write the report","priority":"high","tags":["q4"]}"#.into(),
            timestamp: Some(1_795_000_000),
            nonce: Some("0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d".into()),
            format: SignFormat::Headers,
        };
        let out = signature_headers(&args, 0);
        assert!(out.contains(
            "X-Signature: 184d5eb61965750d632fb9668d371ab59a2978bdc7e077607e8bc7ba0a75dd99\n"
        ));
        assert!(out.starts_with("X-Agent-ID: hr-acme\nX-Timestamp: 1795000000\n"));
        let curl = signature_headers(
            &SignArgs {
                format: SignFormat::Curl,
                ..args
            },
            0,
        );
        assert!(curl.starts_with("-H X-Agent-ID:hr-acme -H X-Timestamp:1795000000 "));
    }
}

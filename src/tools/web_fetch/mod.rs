//! The `web_fetch` tool: one page over HTTP(S), its HTML turned into
//! Markdown (htmd), for the model to read.
//!
//! Invariants: only `http` and `https` URLs without credentials are
//! fetched (`file://` is refused: `read_file` reads the workspace); every
//! hop's host is resolved once and each address checked, and the request
//! connects to exactly those addresses, so a loopback, private,
//! link-local or other non-public address (also inside an IPv6
//! translation prefix: [`address`]) is refused unless the host is
//! in `web_allow`, and a name cannot be re-pointed between the check and
//! the connection; redirects are followed by hand, at most
//! [`MAX_REDIRECTS`], each with the same checks as the first URL; no
//! cookie, key or header of Waypoint's is sent; at most [`MAX_BYTES`] are
//! read. The gate asks for it like a command (`Access::Network`).

mod address;
mod decode;

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{TypedTool, held};
use super::{
    Access, Target, ToolCtx, ToolDetail, ToolEnv, ToolOutput, ToolSpec, ToolSummary, summary_line,
};
pub use address::is_public;

/// The most bytes of a body read.
pub const MAX_BYTES: usize = 5 * 1024 * 1024;

/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 5;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The `web_fetch` tool.
pub struct WebFetch;

/// A `web_fetch` call's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FetchArgs {
    // The page's address (http or https).
    #[serde(alias = "uri")]
    pub url: String,
    // How the page comes back (default: markdown).
    #[schemars(extend("enum" = ["markdown", "text", "raw"]))]
    pub format: Option<String>,
}

impl TypedTool for WebFetch {
    type Args = FetchArgs;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        ToolSpec::builtin(
            "web_fetch",
            "Fetch a web page (http or https) and read it: HTML comes back as Markdown (format: markdown, \
the default; text; or raw). Public addresses only; redirects are followed. Asked for like a command.",
            schema,
            Access::Network,
        )
    }
    fn target_of<'v>(&self, args: &FetchArgs, input: &'v Value) -> Target<'v> {
        Target::Url(held(input, &args.url))
    }
    fn summary_of(&self, args: Option<&FetchArgs>) -> ToolSummary {
        ToolSummary {
            line: summary_line(args.map_or("", |a| a.url.as_str())),
            detail: ToolDetail::Output,
        }
    }
    fn call<'a>(&'a self, args: FetchArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { fetch_page(&args, &ctx.env).await })
    }
}

/// What the body is shown as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Markdown,
    Text,
    Raw,
}

/// Runs a `web_fetch` call: fetches the page `args` name.
async fn fetch_page(args: &FetchArgs, env: &ToolEnv<'_>) -> ToolOutput {
    let fetched = async {
        let url = args.url.trim();
        let format = match args.format.as_deref() {
            None | Some("markdown") => Format::Markdown,
            Some("text") => Format::Text,
            Some("raw") => Format::Raw,
            Some(other) => {
                return Err(format!(
                    "`format` is `{other}`; it is markdown, text or raw"
                ));
            }
        };
        let url = Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
        fetch(url, format, &env.config.web_allow).await
    };
    tokio::select! {
        out = fetched => match out {
            Ok(text) => ToolOutput::ok(text),
            Err(e) => ToolOutput::error(e),
        },
        () = env.cancel.cancelled() => ToolOutput::interrupted("The fetch was stopped.", ""),
    }
}

/// Follows `url` through its redirects and reads the page.
async fn fetch(mut url: Url, format: Format, allow: &[String]) -> Result<String, String> {
    for _ in 0..=MAX_REDIRECTS {
        let (host, addrs) = checked(&url, allow).await?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .resolve_to_addrs(&host, &addrs)
            .no_proxy()
            .timeout(TIMEOUT)
            .user_agent(concat!(
                "Waypoint/",
                env!("CARGO_PKG_VERSION"),
                " web_fetch"
            ))
            .build()
            .map_err(|e| format!("no HTTP client: {e}"))?;
        let response = client
            .get(url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html, text/markdown, text/plain;q=0.9, */*;q=0.5",
            )
            .send()
            .await
            .map_err(|e| {
                format!(
                    "fetching {url} failed: {}",
                    crate::text::clean_line(&e.to_string())
                )
            })?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| format!("{url} answered {status} without a Location"))?;
            url = url
                .join(location)
                .map_err(|e| format!("{url} redirected to `{location}`, not a URL: {e}"))?;
            continue;
        }
        return read(response, &url, format).await;
    }
    Err(format!(
        "more than {MAX_REDIRECTS} redirects; last to {url}"
    ))
}

/// The URL's host and addresses, each one allowed; or why not.
async fn checked(url: &Url, allow: &[String]) -> Result<(String, Vec<SocketAddr>), String> {
    match url.scheme() {
        "http" | "https" => {}
        "file" => {
            return Err("file:// URLs are not fetched; read workspace files with read_file".into());
        }
        other => {
            return Err(format!(
                "only http and https URLs are fetched, not {other}:"
            ));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "a URL with a user name or password is not fetched (no credentials are sent)".into(),
        );
    }
    let host = url
        .host_str()
        .ok_or_else(|| format!("{url} has no host"))?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let allowed = allow.iter().any(|h| h.eq_ignore_ascii_case(&host));
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| format!("{host} could not be resolved: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("{host} has no address"));
    }
    if !allowed && let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
        return Err(format!(
            "{host} is at {}, a private, loopback or otherwise non-public address: not fetched (add the host to web_allow in the config to allow it)",
            bad.ip()
        ));
    }
    Ok((host, addrs))
}

/// The page's text as the model reads it: where it came from, then the
/// body (at most [`MAX_BYTES`] read; cut bodies say so).
async fn read(
    mut response: reqwest::Response,
    url: &Url,
    format: Format,
) -> Result<String, String> {
    let status = response.status();
    let kind = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let encoding = response
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("reading {url} failed: {e}"))?
    {
        let room = MAX_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let textual = kind.is_empty()
        || kind.starts_with("text/")
        || kind.contains("json")
        || kind.contains("xml")
        || kind.contains("javascript");
    if !textual {
        return Err(format!(
            "{url} is {kind} ({} bytes read), not text: not shown",
            body.len()
        ));
    }
    let (body, cut) = decode::decoded(&encoding, body, cut).map_err(|e| format!("{url}: {e}"))?;
    let text = String::from_utf8_lossy(&body);
    let html = kind.contains("html") || (kind.is_empty() && text.trim_start().starts_with('<'));
    let shown = match format {
        Format::Raw => text.into_owned(),
        Format::Markdown if html => markdown(&text)?,
        Format::Text if html => plain(&markdown(&text)?),
        Format::Markdown | Format::Text => text.into_owned(),
    };
    let mut out = format!(
        "URL: {url}\nStatus: {status}\nContent-Type: {kind}\n\n{}",
        shown.trim()
    );
    if cut {
        out.push_str(&format!(
            "\n\n[cut: only the first {} MiB were read]",
            MAX_BYTES / (1024 * 1024)
        ));
    }
    if !status.is_success() {
        out = format!("The server answered {status}.\n{out}");
    }
    Ok(out)
}

/// HTML as Markdown, without what a reader does not see (scripts,
/// styles, the head, templates and embedded frames).
fn markdown(html: &str) -> Result<String, String> {
    htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "head", "noscript", "template", "iframe", "svg",
        ])
        .build()
        .convert(html)
        .map_err(|e| format!("the HTML could not be converted: {e}"))
}

/// Markdown as plain text: the line marks left out.
fn plain(markdown: &str) -> String {
    markdown
        .lines()
        .map(|l| l.trim_start_matches(['#', '>', '*', '-', ' ']).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn file_urls_credentials_and_private_hosts_are_refused() {
        let refused = |u: &str| Url::parse(u).unwrap();
        let e = checked(&refused("file:///etc/passwd"), &[])
            .await
            .unwrap_err();
        assert!(e.contains("read_file"), "{e}");
        let e = checked(&refused("https://user:pw@example.com/"), &[])
            .await
            .unwrap_err();
        assert!(e.contains("password"), "{e}");
        let e = checked(&refused("http://127.0.0.1:9/"), &[])
            .await
            .unwrap_err();
        assert!(e.contains("web_allow"), "{e}");
        let e = checked(&refused("ftp://example.com/"), &[])
            .await
            .unwrap_err();
        assert!(e.contains("only http and https"), "{e}");
        let ok = checked(&refused("http://127.0.0.1:9/"), &["127.0.0.1".into()]).await;
        assert!(ok.is_ok());
    }

    /// A web server on 127.0.0.1 that answers every request with `body`
    /// under `Content-Encoding: encoding`.
    async fn encoded_server(encoding: &'static str, body: Vec<u8>) -> Url {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let body = body.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let _ = sock.read(&mut buf).await;
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: {encoding}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = sock.write_all(head.as_bytes()).await;
                    let _ = sock.write_all(&body).await;
                });
            }
        });
        Url::parse(&format!("http://127.0.0.1:{port}/page")).unwrap()
    }

    fn compressed(encoding: &str, text: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let level = flate2::Compression::default();
        match encoding {
            "gzip" => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
                e.write_all(text).unwrap();
                e.finish().unwrap()
            }
            "deflate" => {
                let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
                e.write_all(text).unwrap();
                e.finish().unwrap()
            }
            _ => {
                let mut e = flate2::write::DeflateEncoder::new(Vec::new(), level);
                e.write_all(text).unwrap();
                e.finish().unwrap()
            }
        }
    }

    #[tokio::test]
    async fn gzip_and_deflate_pages_are_decoded() {
        let page = format!(
            "<html><body><h1>Release notes</h1>{}</body></html>",
            "<p>Version 2.0 is out.</p>".repeat(200)
        );
        let allow = ["127.0.0.1".to_string()];
        // `deflate` as zlib (the standard) and as a bare stream (what some
        // servers send).
        for (encoding, wire) in [("gzip", "gzip"), ("deflate", "deflate"), ("deflate", "raw")] {
            let body = compressed(wire, page.as_bytes());
            assert!(!String::from_utf8_lossy(&body).contains("Release notes"));
            let url = encoded_server(encoding, body).await;
            let text = fetch(url, Format::Markdown, &allow).await.unwrap();
            assert!(
                text.contains("# Release notes") && text.contains("Version 2.0"),
                "{encoding} ({wire}): {text}"
            );
        }
    }

    #[tokio::test]
    async fn a_gzip_bomb_is_cut_at_the_limit() {
        let bomb = compressed("gzip", &vec![b'a'; 3 * MAX_BYTES]);
        assert!(bomb.len() < MAX_BYTES / 100);
        let url = encoded_server("gzip", bomb).await;
        let text = fetch(url, Format::Raw, &["127.0.0.1".to_string()])
            .await
            .unwrap();
        assert!(
            text.contains("[cut: only the first 5 MiB"),
            "{}",
            &text[text.len() - 200..]
        );
        assert!(text.len() < MAX_BYTES + 1000, "{}", text.len());
    }
}

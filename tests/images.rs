//! Images through the real binary on a loopback model, on each wire:
//! `read_file` of a PNG shows the picture after the results (an Anthropic
//! image block, a Chat Completions `image_url` part, a Responses
//! `input_image`); `@shot.png` in a prompt attaches it; a model that takes
//! no images gets a clear refusal naming it, and nothing of the image is
//! sent; a resumed session sends its images again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cli_support;
use crate::common;
use crate::loopback;

use std::path::Path;

use base64::Engine as _;
use loopback::{Answer, FakeServer, ProviderWire, Recorded};
use serde_json::{Value, json};

/// A real 64x48 PNG (red, RGBA), made here.
fn png() -> Vec<u8> {
    fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut crc_input = kind.to_vec();
        crc_input.extend_from_slice(data);
        out.extend_from_slice(&crc32(&crc_input).to_be_bytes());
        out
    }
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for b in bytes {
            crc ^= u32::from(*b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let (w, h) = (64u32, 48u32);
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    // Stored (uncompressed) deflate blocks: a zlib stream any reader takes.
    // Each row: filter type 0, then the pixels.
    let row: Vec<u8> = std::iter::once(0)
        .chain([255, 0, 0, 255].repeat(w as usize))
        .collect();
    let raw = row.repeat(h as usize);
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        z.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        z.extend_from_slice(&len.to_le_bytes());
        z.extend_from_slice(&(!len).to_le_bytes());
        z.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for byte in &raw {
        a = (a + u32::from(*byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    z.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(b"IDAT", &z));
    out.extend(chunk(b"IEND", &[]));
    out
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("shot.png"), png()).unwrap();
    (home, ws)
}

fn openai(home: &Path, ws: &Path, url: &str, model: &str) -> tokio::process::Command {
    cli_support::on_loopback_openai(home, ws, url, model)
}

fn all_text(r: &Recorded) -> String {
    r.body.to_string()
}

/// Anthropic: the tool's image is an image block right after the
/// `tool_result` (which says it follows); a mentioned image rides with
/// the prompt; a resumed session sends both again.
#[tokio::test]
async fn anthropic_sees_read_and_mentioned_images_and_a_resume_keeps_them() {
    let (home, ws) = workspace();
    let server = FakeServer::<common::Anthropic>::start(vec![
        common::Anthropic::reply(Answer::tool("read_file", json!({"path": "shot.png"}))),
        common::Anthropic::text("A red square."),
        common::Anthropic::text("Still red."),
    ])
    .await;
    let mut cmd = cli_support::on_loopback(home.path(), ws.path(), &server.url, "claude-test");
    cmd.args(["-p", "what is in @shot.png?"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let want = b64(&png());
    let reqs = server.requests();
    let first = reqs[0].messages()[0]["content"].as_array().unwrap().clone();
    let image = first
        .iter()
        .find(|b| b["type"] == "image")
        .expect("the mentioned image");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(image["source"]["data"], want.as_str());
    assert!(all_text(&reqs[0]).contains("64x48 png"));
    let last = reqs[1].messages().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(last[0]["type"], "tool_result");
    let said = last[0]["content"].as_str().unwrap();
    assert!(
        said.contains("[image `shot.png`: 64x48 png") && said.contains("it follows"),
        "{said}"
    );
    assert_eq!(last[1]["type"], "image");
    assert_eq!(last[1]["source"]["data"], want.as_str());

    // Resumed: both images go out again, from the transcript.
    let session = err
        .lines()
        .find_map(|l| l.strip_prefix("waypoint: resume with: waypoint -r "))
        .expect("the session id")
        .trim()
        .to_string();
    let mut cmd = cli_support::on_loopback(home.path(), ws.path(), &server.url, "claude-test");
    cmd.args(["-r", &session, "-p", "and now?"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let reqs = server.requests();
    let images = reqs[2]
        .messages()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "image" && b["source"]["data"] == want.as_str())
        .count();
    assert_eq!(images, 2, "both images again after the resume");
}

/// Chat Completions with a vision model: the result says the image
/// follows, then a user message carries it as a data URL.
#[tokio::test]
async fn chat_completions_sends_the_image_as_a_data_url_part() {
    let (home, ws) = workspace();
    let server = FakeServer::<common::openai::OpenAi>::start(vec![
        common::openai::OpenAi::reply(Answer::tool("read_file", json!({"path": "shot.png"}))),
        common::openai::OpenAi::text("Red."),
    ])
    .await;
    let mut cmd = openai(home.path(), ws.path(), &server.url, "gpt-4.1");
    cmd.args(["-p", "look at the screenshot"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let reqs = server.requests();
    common::openai::assert_valid_chat_request(&reqs[1].body);
    let messages = reqs[1].messages();
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(
        messages[tool]["content"]
            .as_str()
            .unwrap()
            .contains("64x48 png")
    );
    let parts = messages[tool + 1]["content"].as_array().expect("parts");
    let url = parts
        .iter()
        .find(|p| p["type"] == "image_url")
        .map(|p| p["image_url"]["url"].as_str().unwrap().to_string())
        .expect("an image part");
    assert_eq!(url, format!("data:image/png;base64,{}", b64(&png())));
}

/// The Responses wire: a mentioned image is an `input_image` of the
/// user's message.
#[tokio::test]
async fn responses_sends_a_mentioned_image_as_input_image() {
    let (home, ws) = workspace();
    let server = FakeServer::<common::responses::Responses>::start(vec![
        common::responses::Responses::text("Red."),
    ])
    .await;
    let mut cmd = openai(home.path(), ws.path(), &server.url, "gpt-5-codex");
    cmd.args(["-p", "what is @shot.png"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let reqs = server.requests();
    let parts: Vec<Value> = reqs[0].input()[0]["content"].as_array().unwrap().clone();
    assert!(parts.iter().any(|p| p["type"] == "input_image"
        && p["image_url"] == format!("data:image/png;base64,{}", b64(&png()))));
}

/// A model that takes no images: `read_file` refuses, naming the model;
/// a mentioned image is not attached and the user is told why; no
/// request carries the picture.
#[tokio::test]
async fn a_model_without_images_is_refused_clearly_and_sent_nothing() {
    let (home, ws) = workspace();
    let server = FakeServer::<common::openai::OpenAi>::start(vec![
        common::openai::OpenAi::reply(Answer::tool("read_file", json!({"path": "shot.png"}))),
        common::openai::OpenAi::text("I cannot see it."),
    ])
    .await;
    let mut cmd = openai(home.path(), ws.path(), &server.url, "qwen2.5-coder:7b");
    cmd.args(["-p", "what is in @shot.png"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("Not attached: `shot.png` is an image (64x48 png")
            && err.contains("the model `qwen2.5-coder:7b` does not take images"),
        "{err}"
    );
    let reqs = server.requests();
    let result = reqs[1].last_tool_messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.starts_with("Error: `shot.png` is an image (64x48 png")
            && result.contains("the model `qwen2.5-coder:7b` does not take images"),
        "{result}"
    );
    let sent: String = reqs.iter().map(all_text).collect();
    assert!(!sent.contains("data:image"), "no image went out");
    assert!(!sent.contains(&b64(&png())[..40]));
}

/// A vision model Waypoint does not know by name takes images once the
/// settings say so (`WAYPOINT_IMAGES=1`, or `images = true`).
#[tokio::test]
async fn the_settings_can_say_a_model_takes_images() {
    let (home, ws) = workspace();
    let server =
        FakeServer::<common::openai::OpenAi>::start(vec![common::openai::OpenAi::text("Red.")])
            .await;
    let mut cmd = openai(home.path(), ws.path(), &server.url, "moondream");
    cmd.env("WAYPOINT_IMAGES", "1")
        .args(["-p", "what is @shot.png"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!err.contains("Not attached"), "{err}");
    let sent = all_text(&server.requests()[0]);
    assert!(sent.contains(&format!("data:image/png;base64,{}", b64(&png()))));
}

/// A PNG of about `size` bytes: [`png`] with bytes after its end (the
/// header is what is read; the size is what counts).
fn png_of(size: usize) -> Vec<u8> {
    let mut bytes = png();
    bytes.resize(size, 0);
    bytes
}

fn images_in(r: &Recorded) -> usize {
    r.messages()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "image")
        .count()
}

/// One reply may show at most 20 images and 20 MB of them: the calls past
/// that get a result that says so and what to do; the next reply has its
/// own budget.
#[tokio::test]
async fn a_reply_shows_at_most_twenty_images_and_twenty_megabytes() {
    let (home, ws) = workspace();
    let mut many = Answer::tool("read_file", json!({"path": "s0.png"}));
    for i in 0..25 {
        std::fs::write(ws.path().join(format!("s{i}.png")), png_of(1000 + i)).unwrap();
        if i > 0 {
            many = many.with_tool("read_file", json!({"path": format!("s{i}.png")}));
        }
    }
    let mut big = Answer::tool("read_file", json!({"path": "b0.png"}));
    for i in 0..8 {
        std::fs::write(ws.path().join(format!("b{i}.png")), png_of(3_000_000 + i)).unwrap();
        if i > 0 {
            big = big.with_tool("read_file", json!({"path": format!("b{i}.png")}));
        }
    }
    let server = FakeServer::<common::Anthropic>::start(vec![
        common::Anthropic::reply(many),
        common::Anthropic::reply(big),
        common::Anthropic::text("Seen."),
    ])
    .await;
    let mut cmd = cli_support::on_loopback(home.path(), ws.path(), &server.url, "claude-test");
    cmd.args(["-p", "look at them all"]);
    let (code, out, err) = cli_support::output(&mut cmd).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let reqs = server.requests();
    assert_eq!(images_in(&reqs[1]), 20, "20 of the 25 small ones");
    let results: Vec<String> = reqs[1].messages().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].to_string())
        .collect();
    assert_eq!(results.len(), 25);
    // The calls run side by side: which five is not said, only how many.
    let spent: Vec<&String> = results
        .iter()
        .filter(|r| r.contains("images are spent"))
        .collect();
    assert_eq!(spent.len(), 5, "{results:#?}");
    assert!(spent.iter().all(|r| r.contains("next reply")), "{spent:?}");
    // 3 MB each: six make 18 MB, a seventh would pass 20 MB.
    assert_eq!(images_in(&reqs[2]), 20 + 6, "six more of the big ones");
}
